#!/bin/bash
# fp8-doctor holdout13 (eval14): NVIDIA-NeMo/Megatron-Bridge @ 067f987df03b8355b03192d88d70f1709fedf51a, examples/model_verification_cards/deepseek-v3/card.yaml
# pretrain_performance.H100 (status verified, precision bf16, last_verified 2026-08-15): the command verbatim.
# scripts/training/train.sh execs setup_experiment.py, which forwards to run_recipe.py; the recipe name exists in
# src/megatron/bridge/recipes/deepseek/h100/deepseek_v3.py (MixedPrecisionConfig(bf16=True), FP8 lines commented out)
# and in perf_recipes/deepseek/h100/deepseek_v3.py (_perf_precision("bf16")). The launcher files are the same as the
# holdout12 Megatron-Bridge job's (same commit); the card and recipes are this job's own.
./scripts/training/train.sh --wait --nodes 128 --gpus-per-node 8 \
  --recipe deepseek_v3_pretrain_1024gpu_h100_bf16_config \
  --mode pretrain --max_steps 50 --seq_length 4096 \
  logger.save_config_filepath=work/model-verification/deepseek-v3/h100-performance/ConfigContainer.yaml
