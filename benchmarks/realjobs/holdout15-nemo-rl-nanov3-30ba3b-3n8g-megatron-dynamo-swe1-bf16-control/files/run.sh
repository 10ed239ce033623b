#!/bin/bash
# fp8-doctor holdout15 (eval16): NVIDIA-NeMo/RL @ 7ea279abfbeb698b092856d0dab61e7cf39bc909: the launch of the recipe as its
# test suite runs it (tests/test_suites/llm/grpo-nanov3-30ba3b-3n8g-megatron-dynamo-swe1.sh:31-33, NUM_NODES=3
# GPUS_PER_NODE=8); the suite's logging overrides are left out (no precision among them).
uv run examples/nemo_gym/run_grpo_nemo_gym.py \
    --config examples/configs/recipes/llm/grpo-nanov3-30ba3b-3n8g-megatron-dynamo-swe1.yaml \
    grpo.max_num_steps=4
