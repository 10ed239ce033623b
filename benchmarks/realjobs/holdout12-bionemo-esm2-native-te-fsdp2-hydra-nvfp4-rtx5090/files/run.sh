#!/bin/bash
# fp8-doctor holdout12 (eval13): NVIDIA/bionemo-framework @ 3a9d005bffaa711e5964211d3ba34c5e373eb624,
# bionemo-recipes/recipes/esm2_native_te/README.md l.142: NVFP4 by the hydra override fp4_config.enabled=true
# (hydra_config/defaults.yaml: transformer_engine.common.recipe.NVFP4BlockScaling, E2M1, no recipe kwargs), run on
# the single RTX 5090 the README's own experiments used (l.215). RECONSTRUCTION of the GPU: the README says NVFP4
# "Requires compute capability 10.0 and above (Blackwell+)", which an RTX 5090 (12.0) meets on paper.
python train_fsdp2.py --config-name L0_sanity fp4_config.enabled=true
