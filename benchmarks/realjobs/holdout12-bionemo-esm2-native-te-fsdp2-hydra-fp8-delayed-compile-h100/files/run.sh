#!/bin/bash
# fp8-doctor holdout12 (eval13): NVIDIA/bionemo-framework @ 3a9d005bffaa711e5964211d3ba34c5e373eb624,
# bionemo-recipes/recipes/esm2_native_te/README.md l.136 (and l.403): FP8 is turned on by the hydra override
# fp8_config.enabled=true; hydra_config/defaults.yaml names the recipe class as a string
# (transformer_engine.common.recipe.DelayedScaling, HYBRID), L0_sanity.yaml sets use_torch_compile: true.
python train_fsdp2.py --config-name L0_sanity fp8_config.enabled=true
