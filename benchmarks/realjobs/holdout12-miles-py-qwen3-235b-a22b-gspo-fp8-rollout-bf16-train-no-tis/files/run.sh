#!/bin/bash
# fp8-doctor holdout12 (eval13): radixark/miles @ 31f1ca961a94cb860cec3b2dea34ec332bfa8f76, the usage line of
# scripts/run_qwen3_235b_a22b.py's docstring (l.28 of the original: `MASTER_ADDR=<head ip> python
# scripts/run_qwen3_235b_a22b.py`) with every default: rollout_fp8=True points --hf-checkpoint at the -FP8 release
# (l.62-64), Megatron trains in BF16, no --use-tis / --enable-mis anywhere in the script.
MASTER_ADDR=10.0.0.1 python scripts/run_qwen3_235b_a22b.py
