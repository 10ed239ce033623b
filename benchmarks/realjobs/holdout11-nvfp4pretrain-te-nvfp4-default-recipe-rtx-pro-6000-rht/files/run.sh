#!/bin/bash
# fp8-doctor holdout11 (eval12): Infatoshi/nvfp4-pretrain @ 3e7bad69696a7a09a1fe0eb6c1e51cbaea1108cd.
# te/te_env.sh says "Source before running Transformer Engine"; te/train_te.py trains a BF16 reference and
# two NVFP4 runs with te.Linear under fp8_autocast(fp8_recipe=NVFP4BlockScaling()) - the full recipe
# (RHT + stochastic rounding), which its docstring says fails on sm_120 in TE 2.15 unless the repository's
# te/nvfp4_sm120_degrade.patch has been applied to the installed transformer_engine.
source te/te_env.sh
python3 te/train_te.py --steps 1500
