#!/bin/bash
# Source: meta-pytorch/torchtune @ bd2a0fc7c31430972728494fa01aaeeb0ebf1ba1, the launch line in the header of
# recipes/configs/llama3_2/3B_full.yaml (4 devices).
tune run --nproc_per_node 4 full_finetune_distributed --config recipes/configs/llama3_2/3B_full.yaml
