#!/bin/bash
# RECONSTRUCTION after NVIDIA/TransformerEngine (https://github.com/NVIDIA/TransformerEngine/issues/2668)
# fp8-doctor holdout25 (eval26): single-GPU run of the reconstructed TE issue 2668 setup.
python bench_recipe.py
