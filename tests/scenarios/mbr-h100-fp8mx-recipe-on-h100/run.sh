#!/bin/bash
# Megatron-Bridge v0.6.0 (commit 51885cf132b2814188b6855c25a8588254274c2a): its MXFP8 Llama 3 8B recipe
# of the h100 namespace (src/megatron/bridge/recipes/llama/h100/llama3.py L679, preset
# bf16_with_mxfp8_mixed), launched as scripts/training/run_recipe.py documents.
torchrun --nproc-per-node 2 scripts/training/run_recipe.py \
    --recipe llama3_8b_pretrain_2gpu_h100_fp8mx_config
