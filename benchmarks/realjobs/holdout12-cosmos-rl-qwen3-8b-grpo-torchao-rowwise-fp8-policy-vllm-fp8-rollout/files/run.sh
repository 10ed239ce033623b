#!/bin/bash
# fp8-doctor holdout12 (eval13): nvidia-cosmos/cosmos-rl @ 89f2e5b5c817d99a240f1194ce37239ceb6f058a. The launcher's
# documented form `cosmos-rl --config <toml>` (docs/quickstart/customization.rst l.342; pyproject [project.scripts]
# cosmos-rl = cosmos_rl.launcher.launch_all:main) with the repo's FP8 GRPO config: [train.fp8] enable_fp8 = true
# (torchao float8, rowwise, dynamic scaling), [rollout] quantization = "fp8" (vLLM), train.compile = false,
# docs/quantization/fp8.rst the settings' meaning.
cosmos-rl --config configs/qwen3/qwen3-8b-p-fsdp1-tp4-fp8-r-tp4-pp1-fp8-grpo.toml
