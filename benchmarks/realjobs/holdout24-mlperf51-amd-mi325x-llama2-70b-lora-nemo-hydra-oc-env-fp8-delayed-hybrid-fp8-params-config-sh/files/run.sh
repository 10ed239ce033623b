#!/bin/bash
# RECONSTRUCTION (eval25): the README's steps for the AMD MLPerf Training v5.1 Llama 2 70B LoRA submission on one
# MI325X node, inside the container: source the system config (it exports FP8=True and the FP8_* settings the
# Hydra config reads through ${oc.env:...}) and run the timed benchmark (torchrun src/train.py).
source config_MI325X_1x8x1.sh
bash run_and_time.sh
