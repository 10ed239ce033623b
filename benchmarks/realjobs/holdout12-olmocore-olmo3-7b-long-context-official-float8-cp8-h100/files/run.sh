#!/bin/bash
# fp8-doctor holdout12 (eval13): allenai/OLMo-core @ fa6c5014c9f6e9ee789da2d9c20d5126fee8df0d.
# src/scripts/official/README.md: the official scripts "are intended to be launched directly with torchrun"
# and take --save-folder (required), --name, --data-root, --work-dir plus dot-notation overrides.
# src/scripts/official/OLMo3/README.md l.57: stage 3 (long-context) of Olmo 3 7B ran on 256 H100s with this
# script (32 nodes x 8); Float8Config(enabled=True, ao=AOFloat8LinearConfig.recommended()) at l.91 of the
# original, compile_model=True, CP 8, HSDP with shard_degree 1.
torchrun --nnodes=32 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=$MASTER_ADDR:29500 \
  src/scripts/official/OLMo3/OLMo-3-1025-7B-long-context.py \
  --name=olmo3-7b-long-context --save-folder=/checkpoints/olmo3-7b-long-context \
  --data-root=gs://ai2-llm --work-dir=/tmp/olmo-core/dataset-cache
