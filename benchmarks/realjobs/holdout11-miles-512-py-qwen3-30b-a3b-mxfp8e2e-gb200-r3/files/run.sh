#!/bin/bash
# fp8-doctor holdout11 (eval12): the example command of radixark/miles PR 512 ("Implement Blackwell
# MXFP8 recipe", merged 2026-01-24), verbatim, run with scripts/run_qwen3_30b_a3b.py @
# 31f1ca961a94cb860cec3b2dea34ec332bfa8f76 (beside this file): --train-mxfp8 on GB200 gives
# --fp8-format e4m3 --fp8-recipe mxfp8 (l.223-234) and the -MXFP8 checkpoint for SGLang (l.124-125);
# R3 (rollout routing replay) through --extra-args, no --enable-mis.
python scripts/run_qwen3_30b_a3b.py --hardware GB200 --num-gpus-per-node 8 --rollout-mxfp8 --train-mxfp8 --extra-args "--use-rollout-routing-replay --use-miles-router "
