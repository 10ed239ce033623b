#!/bin/bash
# The newcomer review's d_hf job (shared/research/newcomer-review-2026-11.md row 1): FP8 asked for
# on the launch line, bf16=True in the script's TrainingArguments. The echo line once made the
# launch script disappear from the job (issue 22).
echo "Starting training with accelerate launch..."
accelerate launch --mixed_precision fp8 train.py
