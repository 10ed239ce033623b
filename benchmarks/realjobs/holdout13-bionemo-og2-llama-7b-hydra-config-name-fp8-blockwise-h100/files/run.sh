#!/bin/bash
# fp8-doctor holdout13 (eval14): NVIDIA/bionemo-framework @ 3a9d005bffaa711e5964211d3ba34c5e373eb624, recipe bionemo-recipes/recipes/opengenome2_llama_native_te
# (files kept at the recipe's own layout). The usage line of hydra_config/og2_7b_thd_gqa_fp8.yaml: defaults
# [og2_7b_thd_gqa, _self_], fp8_config.enabled true with transformer_engine.common.recipe.Float8BlockScaling (E4M3),
# fp8_first_last_bf16; train_fsdp2.py is @hydra.main(config_path="hydra_config", config_name="L0_sanity").
torchrun --nproc_per_node=8 train_fsdp2.py --config-name og2_7b_thd_gqa_fp8
