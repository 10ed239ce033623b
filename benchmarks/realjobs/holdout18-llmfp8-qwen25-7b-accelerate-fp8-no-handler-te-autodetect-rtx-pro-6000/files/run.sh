#!/bin/bash
# fp8-doctor holdout18 (eval19): xuanvinh1997/llm-fp8 @ de71c7318ffa023f9363ba48f1593a447b684319, README.md
# (the 'Qwen2.5 7B' command of the W&B benchmarking section; the README: 'For Qwen2.5 we rely on the standard Hugging Face implementation, so leave --use_te unset', verbatim). Run from the repository root on one RTX PRO 6000 Blackwell (96 GB).
python train_fp8.py \
  --model_name Qwen/Qwen2.5-7B-Instruct \
  --dataset_name nvidia/OpenMathInstruct-2 \
  --batch_size 8 \
  --mixed_precision fp8 \
  --max_seq_length 1024 \
  --num_of_samples 100000 \
  --use_wandb \
  --wandb_project llm-fp8 \
  --wandb_run_name qwen25-7b-fp8
