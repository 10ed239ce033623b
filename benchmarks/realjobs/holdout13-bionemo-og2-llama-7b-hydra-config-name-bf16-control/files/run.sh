#!/bin/bash
# fp8-doctor holdout13 (eval14): NVIDIA/bionemo-framework @ 3a9d005bffaa711e5964211d3ba34c5e373eb624, recipe bionemo-recipes/recipes/opengenome2_llama_native_te.
# README: `torchrun --nproc_per_node=8 train_fsdp2.py --config-name og2_7b_thd_gqa` (the BF16 run the README reports
# against the Megatron FP8 baseline); defaults.yaml fp8_config.enabled false.
torchrun --nproc_per_node=8 train_fsdp2.py --config-name og2_7b_thd_gqa
