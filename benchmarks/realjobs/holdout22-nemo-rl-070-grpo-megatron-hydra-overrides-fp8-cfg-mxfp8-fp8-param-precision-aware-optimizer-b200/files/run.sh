#!/bin/bash
# RECONSTRUCTION (eval23): a NeMo-RL v0.7.0 user launch of the stock Megatron GRPO config with the FP8 switches as
# Hydra-style overrides (the keys of grpo_math_1B.yaml's policy.megatron_cfg.fp8_cfg block), MXFP8 with FP8
# parameters, on one 8 x B200 node - the configuration NVIDIA-NeMo/RL PR 3281 fixes.
uv run examples/run_grpo.py \
    --config examples/configs/grpo_math_1B_megatron.yaml \
    policy.model_name=Qwen/Qwen3-8B \
    policy.megatron_cfg.fp8_cfg.enabled=true \
    policy.megatron_cfg.fp8_cfg.fp8_recipe=mxfp8 \
    policy.megatron_cfg.fp8_cfg.fp8_param=true \
    cluster.gpus_per_node=8 \
    logger.wandb_enabled=false
