#!/bin/bash
# fp8-doctor holdout11 (eval12): inclusionAI/AReaL @ 4aef98d8d818af55b43621aaadba047ae10f4e77.
# The local launch of docs/en/algorithms/grpo_series.md (l.33) with the Megatron GRPO example config.
python3 examples/math/gsm8k_rl.py --config examples/math/gsm8k_grpo_megatron.yaml scheduler.type=local
