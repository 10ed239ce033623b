#!/bin/bash
# fp8-doctor holdout13 (eval14): nvidia-cosmos/cosmos-rl @ 89f2e5b5c817d99a240f1194ce37239ceb6f058a. `cosmos-rl --config <toml>` with the repo's Qwen3-8B GRPO config
# whose [train.fp8] enable_fp8 = true, quant_recipe = "rowwise" (torchao float8 of the policy), train.compile = false,
# and [rollout] quantization = "none" (BF16 vLLM rollout).
cosmos-rl --config configs/qwen3/qwen3-8b-p-fsdp1-tp4-r-tp4-pp1-grpo-fp8.toml
