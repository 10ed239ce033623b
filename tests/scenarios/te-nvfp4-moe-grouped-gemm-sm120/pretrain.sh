#!/bin/bash
# Megatron-LM MoE pretraining with NVFP4 (TE GroupedLinear experts via --moe-grouped-gemm) on one
# RTX PRO 6000 (sm_120); flags written for this scenario (Megatron-LM arguments.py names).
torchrun --nproc_per_node 1 pretrain_gpt.py \
  --num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 4096 \
  --micro-batch-size 1 --global-batch-size 64 --bf16 \
  --num-experts 64 --moe-router-topk 8 --moe-grouped-gemm --moe-token-dispatcher-type alltoall \
  --transformer-impl transformer_engine --fp4-format e2m1 --fp4-recipe nvfp4 \
  --use-distributed-optimizer
