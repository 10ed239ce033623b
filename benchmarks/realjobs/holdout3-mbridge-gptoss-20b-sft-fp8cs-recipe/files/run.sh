#!/bin/bash
# RECONSTRUCTION of the launch NVIDIA-NeMo/Megatron-Bridge examples/models/gpt_oss/slurm_sft.sh offers in its
# "Recipe overrides" comment: RECIPE_NAME=${MODEL_NAME}_sft_fp8_current_scaling_config (Hopper FP8 current scaling).
RECIPE_NAME=gpt_oss_20b_sft_fp8_current_scaling_config sbatch slurm_sft.sh
