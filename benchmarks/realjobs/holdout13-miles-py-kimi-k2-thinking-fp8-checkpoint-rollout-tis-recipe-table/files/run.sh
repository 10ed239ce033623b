#!/bin/bash
# fp8-doctor holdout13 (eval14): radixark/miles @ 31f1ca961a94cb860cec3b2dea34ec332bfa8f76. scripts/run_kimi_k2.py docstring usage line verbatim: the
# Kimi-K2-Thinking entry of the _RECIPES table loads hf_checkpoint "Kimi-K2-Thinking-fp8" for the SGLang rollout
# and sets use_tis=True (`if recipe.use_tis: grpo_args += "--use-tis "`); Megatron trains BF16.
MILES_SCRIPT_EXTERNAL_RAY=1 python scripts/run_kimi_k2.py --model-name Kimi-K2-Thinking
