#!/bin/bash
# fp8-doctor holdout13 (eval14): radixark/miles @ 31f1ca961a94cb860cec3b2dea34ec332bfa8f76, examples/infra_features/random_async/README.md "Quick start", the
# default line (`python run_random_async_3node.py`, Qwen3.5-35B-A3B, in_place pause + broadcast): SGLang rollout
# from the Qwen3.5-35B-A3B-FP8 checkpoint, Megatron --fp8-format e4m3 --fp8-recipe blockwise, --use-tis; the only
# trainer env var passed is --train-env-vars '{"PYTORCH_CUDA_ALLOC_CONF":"expandable_segments:True"}' (miles sets
# NVTE_FP8_BLOCK_SCALING_FP32_SCALES for the training actors itself, by hardware: miles/utils/environ.py).
cd examples/infra_features/random_async
python run_random_async_3node.py
