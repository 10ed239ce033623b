#!/bin/bash
# fp8-doctor holdout16 (eval17): NVIDIA-NeMo/Automodel @ 17bff8b20dfc334b1f607469fed5d34aba435d87. The `automodel <config> --nproc-per-node 8`
# form the other examples/llm_finetune/*_fp8.yaml configs give in their "To run this recipe" line (this one has none).
automodel examples/llm_finetune/cohere/cohere_command_r_7b_hellaswag_fp8.yaml --nproc-per-node 8
