#!/bin/bash
# RECONSTRUCTION (eval25): thepowerfuldeez/sample_efficient_gpt at cb8b501 ("Add expert-parallel MoE, fp8 experts, and
# SmolLM2 MoE upcycling"): the repository's own launch form (train.sh: uv run torchrun --nproc_per_node 8 train.py
# --config ... --config-key ... --world-size 8) with the moe_runs.yaml experiment written for 8 x B200 with FP8 experts.
cd sample_efficient_gpt
uv run torchrun --nproc_per_node 8 train.py --config configs/moe_runs.yaml --config-key moe_ep_fp8_b200_8gpu --world-size 8
