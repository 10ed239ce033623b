#!/bin/bash
# fp8-doctor holdout11 (eval12): verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9.
# docs/low_precision/fp8.md "FP8 Rollout Only" usage (l.47-70): actor_rollout_ref.rollout.quantization=fp8
# on the command line, and SGLANG_FP8_IGNORED_LAYERS=linear_attn before starting training with SGLang
# (for the Qwen3.5 linear-attention layers), applied to the repository's Qwen3.5-27B GRPO script, which
# reads INFER_BACKEND from the environment (default vllm) and passes "$@" on to verl.trainer.main_ppo.
SGLANG_FP8_IGNORED_LAYERS=linear_attn INFER_BACKEND=sglang \
  bash examples/grpo_trainer/run_qwen3_5_27b_fsdp.sh actor_rollout_ref.rollout.quantization=fp8
