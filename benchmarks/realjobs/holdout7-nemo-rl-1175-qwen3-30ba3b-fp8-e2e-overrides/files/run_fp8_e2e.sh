#!/bin/bash
# Usage quoted in NVIDIA-NeMo/RL PR 1175 (2025-09-21, "FP8 rollout in GRPO for MoE models"): e2e FP8
# (rollout and policy) for Qwen3-30B-A3B, as Hydra-style overrides of the repository's
# examples/configs/grpo_math_qwen30ba3b_megatron.yaml (not part of this job).
export NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1

uv run examples/run_grpo_math.py \
--config examples/configs/grpo_math_qwen30ba3b_megatron.yaml \
cluster.num_nodes=2 \
policy.megatron_cfg.activation_checkpointing=True \
policy.generation.vllm_cfg.precision="fp8" \
policy.generation.vllm_cfg.use_deep_gemm=true \
loss_fn.use_importance_sampling_correction=True \
policy.generation.vllm_cfg.tensor_parallel_size=2 \
policy.megatron_cfg.pipeline_model_parallel_size=2 \
+policy.megatron_cfg.fp8_cfg.enabled=true \
+policy.megatron_cfg.fp8_cfg.fp8=e4m3 \
+policy.megatron_cfg.fp8_cfg.fp8_recipe=blockwise \
+policy.megatron_cfg.fp8_cfg.fp8_param=false
