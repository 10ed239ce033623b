#!/bin/bash
# fp8-doctor holdout15 (eval16): NVIDIA-NeMo/Megatron-Bridge @ 067f987df03b8355b03192d88d70f1709fedf51a, examples/model_verification_cards/nemotron-3.5-lightning/card.yaml
# pretrain_fsdp.GB200.variants.fp8_mx (status verified, precision fp8_mx, last_verified 2026-07-24): the command verbatim
# (card.yaml:298-301 in the job copy, upstream 297-300). train.sh execs setup_experiment.py -> run_recipe.py; the recipe function is
# src/megatron/bridge/perf_recipes/nemotronh/gb200/nemotronh.py:549 in the job copy (_build_nemotron_3_5_lightning_gb200_mxfp8 ->
# _build_nemotron_3_nano_gb200_mxfp8: _perf_precision("fp8_mx") = bf16_with_mxfp8_mixed, then Megatron FSDP
# optim_grads_params, reuse_grad_buf_for_mxfp8_param_ag False, CUDA graphs off).
./scripts/training/train.sh --wait --nodes 2 --gpus-per-node 4 \
  --additional-slurm-params segment=2 \
  --recipe nemotron_3_5_lightning_pretrain_8gpu_gb200_fp8mx_fsdp_config \
  --mode pretrain --max_steps 20
