#!/bin/bash
# RECONSTRUCTION: the tutorial's launch (NVIDIA-NeMo/Speech PR 14552), FP8 recipe.
RECIPE=fp8 torchrun --nproc_per_node 8 tutorials/llm/fp8/02_main.py
