#!/bin/bash
# Reconstruction of the Megatron-LM pretrain_gpt.py test in NVIDIA/TransformerEngine PR 2043 (comment of
# 2025-08-28): tensorwise FP8 with --first-last-layers-bf16 and tensor-parallel communication overlap
# (Userbuffers, what the PR changes). "This fails on the main branch, but succeeds with this patch applied."
# The FP8/BF16-layer flags are quoted; TP/overlap flags and sizes are reconstructed.
export CUDA_DEVICE_MAX_CONNECTIONS=1
torchrun --nproc_per_node 4 pretrain_gpt.py \
    --num-layers 4 \
    --hidden-size 4096 \
    --num-attention-heads 32 \
    --seq-length 2048 \
    --max-position-embeddings 2048 \
    --micro-batch-size 2 \
    --global-batch-size 8 \
    --train-iters 128 \
    --lr 1e-6 \
    --tensor-model-parallel-size 4 \
    --sequence-parallel \
    --tp-comm-overlap \
    --bf16 \
    --fp8-recipe tensorwise \
    --fp8-format e4m3 \
    --first-last-layers-bf16 \
    --num-layers-at-start-in-bf16 1 \
    --num-layers-at-end-in-bf16 1 \
    --mock-data \
    --tokenizer-type NullTokenizer \
    --vocab-size 50304
