#!/bin/bash
# RECONSTRUCTION of the run PR 1337 fixed (radixark/miles, 2026-06-12): DeepSeek-V4-Flash 4-layer
# prune, colocated, on one B200 node with FP8 training asked for. Before the fix run_deepseek_v4.py
# adds --fp8-format e4m3 --fp8-recipe blockwise and NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1 (L566-L570)
# and miles/ray/actor_group.py L58 injects the same variable into every train actor.
python scripts/run_deepseek_v4.py train --model-name DeepSeek-V4-Flash-FP8-4layer --hardware B200 \
    --num-gpus-per-node 8 --colocate --fp8-training \
    --hf-checkpoint /root/models/DeepSeek-V4-Flash-FP8-4layer
