#!/bin/bash
# RECONSTRUCTION: the launch given in pytorch/torchtitan torchtitan/experiments/rl/README.md
# ("Run the DAPO Math reference experiment") at the commit in job.yaml.
python -m torchtitan.experiments.rl.train \
  --module dapo_math \
  --config rl_dapo_qwen3_4b_math_8k
