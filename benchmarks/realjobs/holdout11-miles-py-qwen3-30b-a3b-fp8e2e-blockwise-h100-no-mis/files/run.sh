#!/bin/bash
# fp8-doctor holdout11 (eval12): radixark/miles @ 31f1ca961a94cb860cec3b2dea34ec332bfa8f76,
# scripts/run_qwen3_30b_a3b.py (verbatim beside this file). The launcher's own flags: FP8 rollout
# from the Qwen3-30B-A3B-FP8 checkpoint (--rollout-fp8, l.26, 122-123) and Megatron FP8 training
# (--train-fp8, l.31; on H100 l.223-246: --fp8-format e4m3 --fp8-recipe blockwise and
# NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1). No --enable-mis (l.35, 382-399), so no TIS.
python scripts/run_qwen3_30b_a3b.py --hardware H100 --rollout-fp8 --train-fp8
