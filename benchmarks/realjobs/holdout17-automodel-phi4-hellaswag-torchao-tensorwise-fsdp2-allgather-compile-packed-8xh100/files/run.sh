#!/bin/bash
# fp8-doctor holdout17 (eval18): the launch the recipe's own header gives (NVIDIA-NeMo/Automodel @ 36044ad3d139,
# examples/llm_finetune/phi/phi_4_hellaswag_fp8.yaml: "automodel examples/llm_finetune/phi/phi_4_hellaswag_fp8.yaml
# --nproc-per-node 8"), on one node of 8 GPUs.
automodel examples/llm_finetune/phi/phi_4_hellaswag_fp8.yaml --nproc-per-node 8
