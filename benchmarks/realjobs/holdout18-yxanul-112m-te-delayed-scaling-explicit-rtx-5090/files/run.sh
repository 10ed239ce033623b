#!/bin/bash
# fp8-doctor holdout18 (eval19): yxanul/yxanul_0.6B @ e310bfe0480b733543471e0d1935d2a01a43482a, train/EXPERIMENTS_FP8.md
# ('5. Run optimized FP8 training (best performance)', verbatim, run from train/; one RTX 5090 in nvcr.io/nvidia/pytorch:25.08-py3).
cd train
python train_fp8_optimized.py \
  --data_dir data_mixed_3b \
  --batch_size 18 \
  --max_iters 200 \
  --no_fusion  # Disable gradient fusion
