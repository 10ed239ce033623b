#!/bin/bash
# fp8-doctor holdout16 (eval17): NVIDIA-NeMo/Automodel @ 62d2f8d32519e4e763440028bb5a1b5ac9572a87. The `automodel <config> --nproc-per-node 8`
# form the examples/llm_finetune configs give in their "To run this recipe" line.
automodel examples/llm_finetune/starcoder/starcoder_2_7b_hellaswag_fp8.yaml --nproc-per-node 8
