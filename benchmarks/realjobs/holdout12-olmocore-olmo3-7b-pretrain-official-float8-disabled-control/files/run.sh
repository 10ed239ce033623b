#!/bin/bash
# fp8-doctor holdout12 (eval13): allenai/OLMo-core @ fa6c5014c9f6e9ee789da2d9c20d5126fee8df0d.
# src/scripts/official/OLMo3/README.md l.55: stage 1 (pretraining) of Olmo 3 7B ran on 512 H100s with this script
# (64 nodes x 8), launched with torchrun as src/scripts/official/README.md says. The script imports Float8Config and
# passes Float8Config(enabled=False) (l.88 of the original): BF16 training.
torchrun --nnodes=64 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=$MASTER_ADDR:29500 \
  src/scripts/official/OLMo3/OLMo-3-1025-7B-pretrain-1.py \
  --name=olmo3-7b-pretrain-1 --save-folder=/checkpoints/olmo3-7b-pretrain-1 --data-root=gs://ai2-llm
