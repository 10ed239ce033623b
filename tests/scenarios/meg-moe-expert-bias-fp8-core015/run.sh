#!/bin/bash
# GPT-OSS-like MoE (expert biases: --disable-bias-linear not given) with FP8 on the grouped GEMM
torchrun --nproc_per_node 8 pretrain_gpt.py \
    --num-layers 24 --hidden-size 2880 --ffn-hidden-size 2880 --num-attention-heads 64 \
    --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 \
    --num-experts 32 --moe-router-topk 4 --moe-grouped-gemm --moe-token-dispatcher-type alltoall \
    --expert-model-parallel-size 8 --no-bias-dropout-fusion --bf16 --fp8-format hybrid --fp8-recipe tensorwise
