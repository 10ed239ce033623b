#!/bin/bash
# fp8-doctor job file for NVIDIA/TransformerEngine @ d0067d0da6cb01811b8072a7d304f0e00344ce2b
# fp8-doctor holdout25 (eval26): the TE docs example run as the docs show it.
python docs/features/low_precision_training/nvfp4/pytorch_nvfp4_example.py
