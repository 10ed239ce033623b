#!/bin/bash
# fp8-doctor holdout15 (eval16): NVIDIA-NeMo/RL @ 7ea279abfbeb698b092856d0dab61e7cf39bc909: the launch of the recipe as its
# test suite runs it (tests/test_suites/llm/grpo-minimax-m27-dapo-8n8g-automodel.sh:18-19, NUM_NODES=8 GPUS_PER_NODE=8);
# the suite's logging / checkpoint-dir overrides are left out (no precision among them).
uv run examples/run_grpo.py \
    --config examples/configs/recipes/llm/grpo-minimax-m27-dapo-8n8g-automodel.yaml \
    grpo.max_num_steps=10
