#!/bin/bash
# fp8-doctor holdout14 (eval15): NVIDIA-NeMo/Megatron-Bridge @ 067f987df03b8355b03192d88d70f1709fedf51a, examples/model_verification_cards/nemotron-3-super-120b-a12b/card.yaml
# pretrain_performance.GB300 (status verified, precision nvfp4, last_verified 2026-08-18): the command verbatim
# (card.yaml:713-717). train.sh execs setup_experiment.py -> run_recipe.py; the recipe function is in
# src/megatron/bridge/perf_recipes/nemotronh/gb300/nemotronh.py:180 (cfg.mixed_precision =
# _nemotron_3_super_nvfp4_precision(), common.py:65 -> training/mixed_precision.py:421 bf16_with_nvfp4_mixed with the
# last 14 layers in BF16; per-module quant_recipe te_quant.cfg: attention/latent/MTP BF16, Mamba out_proj MXFP8).
./scripts/training/train.sh --wait --nodes 16 --gpus-per-node 4 \
  --recipe nemotron_3_super_pretrain_64gpu_gb300_nvfp4_config \
  --mode pretrain --max_steps 50 --seq_length 8192 \
  logger.save_config_filepath=work/model-verification/nemotron-3-super-120b-a12b/gb300-performance/ConfigContainer.yaml
