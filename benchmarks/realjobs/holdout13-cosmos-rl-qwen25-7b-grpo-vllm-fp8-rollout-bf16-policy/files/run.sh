#!/bin/bash
# fp8-doctor holdout13 (eval14): nvidia-cosmos/cosmos-rl @ 89f2e5b5c817d99a240f1194ce37239ceb6f058a. The launcher's documented form `cosmos-rl --config <toml>`
# (docs/quickstart/customization.rst) with the repo's Qwen2.5-7B GRPO config whose [rollout] quantization = "fp8"
# (vLLM FP8 rollout); there is no [train.fp8] table, so the policy trains in BF16 (param_dtype bfloat16).
cosmos-rl --config configs/qwen2-5/qwen2-5-7b-p-fsdp2-tp2-r-tp2-pp1-fp8-grpo.toml
