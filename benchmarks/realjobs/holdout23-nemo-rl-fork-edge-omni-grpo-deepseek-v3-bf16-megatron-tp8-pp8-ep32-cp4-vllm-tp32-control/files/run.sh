#!/bin/bash
# RECONSTRUCTION of the launch line for yuanhangsu1986/RL-Nemontron-Edge-Omni (a NeMo-RL fork): the recipe YAML is
# passed to the GRPO math entry point the way NeMo-RL's README runs its recipes.
uv run examples/run_grpo_math.py --config examples/configs/recipes/llm/grpo-dapomath17k-dsv3-megatron.yaml
