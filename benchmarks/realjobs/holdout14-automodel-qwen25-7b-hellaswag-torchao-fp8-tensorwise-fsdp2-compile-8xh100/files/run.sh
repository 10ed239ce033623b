#!/bin/bash
# fp8-doctor holdout14 (eval15): NVIDIA-NeMo/Automodel @ 36044ad3d139363fb6c73c24af2e7c6b65ec52f6, examples/llm_finetune/qwen/qwen2_5_7b_hellaswag_fp8.yaml:18 (the config's own "To run this recipe" line, verbatim).
automodel examples/llm_finetune/qwen/qwen2_5_7b_hellaswag_fp8.yaml --nproc-per-node 8
