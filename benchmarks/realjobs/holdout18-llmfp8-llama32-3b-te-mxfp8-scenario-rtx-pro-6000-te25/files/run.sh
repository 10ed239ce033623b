#!/bin/bash
# fp8-doctor holdout18 (eval19): xuanvinh1997/llm-fp8 @ de71c7318ffa023f9363ba48f1593a447b684319, README.md
# (the '3b - mxfp8 method' command, verbatim). Run from the repository root on one RTX PRO 6000 Blackwell (96 GB).
python train_fp8.py   --model_name meta-llama/Llama-3.2-3B   --dataset_name nvidia/OpenMathInstruct-2   --batch_size 16   --mixed_precision fp8   --fp8_scenario mxfp8   --max_seq_length 512   --split_name train_1M   --use_te   --use_wandb   --wandb_project llm-fp8   --wandb_run_name llama32-3b-mxfp8 --num_of_samples 100000
