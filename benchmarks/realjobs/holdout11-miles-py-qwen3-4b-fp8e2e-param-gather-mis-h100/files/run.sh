#!/bin/bash
# fp8-doctor holdout11 (eval12): radixark/miles @ 31f1ca961a94cb860cec3b2dea34ec332bfa8f76,
# scripts/run_qwen3_4b.py (verbatim beside this file). --train-fp8 (l.256-266): --fp8-format e4m3
# --fp8-recipe blockwise --fp8-param-gather and NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1; --rollout-fp8:
# SGLang serves Qwen3-4B-FP8 (l.105); --enable-mis: TIS/RS through a custom config (l.271-290).
python scripts/run_qwen3_4b.py --hardware H100 --train-fp8 --rollout-fp8 --enable-mis
