#!/bin/bash
# RECONSTRUCTION of the open-r1 (huggingface/open-r1) GRPO demo launch of early 2025: 7 training processes,
# vLLM on the 8th GPU (the recipe's num_processes comment); the repository's
# recipes/accelerate_configs/zero2.yaml is named but is not part of this job.
ACCELERATE_LOG_LEVEL=info accelerate launch --config_file recipes/accelerate_configs/zero2.yaml \
    --num_processes=7 src/open_r1/grpo.py \
    --config recipes/Qwen2.5-1.5B-Instruct/grpo/config_demo.yaml
