#!/bin/bash
# Megatron-LM 23.06-era launch: FP8 through the old --fp8-hybrid flag, tensor parallel 8.
torchrun --nproc_per_node 8 pretrain_gpt.py \
  --tensor-model-parallel-size 8 --sequence-parallel \
  --num-layers 48 --hidden-size 8192 --num-attention-heads 64 \
  --seq-length 2048 --micro-batch-size 1 --global-batch-size 512 \
  --bf16 --transformer-impl transformer_engine \
  --fp8-hybrid --fp8-amax-history-len 1024 --fp8-amax-compute-algo max
