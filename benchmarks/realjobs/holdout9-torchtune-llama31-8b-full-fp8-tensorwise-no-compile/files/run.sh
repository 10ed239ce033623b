#!/bin/bash
# RECONSTRUCTION (meta-pytorch/torchtune @ bd2a0fc7c31430972728494fa01aaeeb0ebf1ba1): the usage line of
# recipes/configs/llama3_1/8B_full.yaml (line 9), on 8 GPUs, with the recipe's FP8 keys set on the
# command line (recipes/full_finetune_distributed.py:211-212 reads enable_fp8_training / fp8_recipe_name
# and converts the model with torchao's convert_to_float8_training at l.617-627).
tune run --nproc_per_node 8 full_finetune_distributed --config recipes/configs/llama3_1/8B_full.yaml \
    enable_fp8_training=True fp8_recipe_name=tensorwise
