#!/bin/bash
# RECONSTRUCTION for fp8-doctor holdout18 (eval19) of cchan/nanoGPT-fp8 issue 1 (2025-01-14): the user trains a
# 1.5B GPT on 8x H800 with this repository's FP8 path; the issue gives no command, so the repository's own launch form
# (config/train_gpt2.py header: torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py) is used with
# --dtype=fp8 and GPT-2 XL dims (1.5B: 48 layers, 25 heads, 1600 wide), configurator.py --key=value overrides.
torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py --dtype=fp8 --n_layer=48 --n_head=25 --n_embd=1600
