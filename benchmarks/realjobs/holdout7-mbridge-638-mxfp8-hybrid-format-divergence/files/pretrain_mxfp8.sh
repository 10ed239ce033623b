#!/bin/bash
# Reconstruction of the setting fixed by NVIDIA-NeMo/Megatron-Bridge PR 638 (2025-09-14, "Bug in MXFP8
# Recipe"): the bf16_with_mxfp8_mixed() recipe set fp8="hybrid" (E5M2 gradients) with the MXFP8 recipe;
# a Nemotron5-8B dense pretraining run diverged and lost MMLU. Written as the Megatron-LM flags that recipe
# maps to; model and data flags are placeholders.
export CUDA_DEVICE_MAX_CONNECTIONS=1
torchrun --nproc_per_node 8 pretrain_gpt.py \
    --num-layers 32 \
    --hidden-size 4096 \
    --ffn-hidden-size 16384 \
    --num-attention-heads 32 \
    --seq-length 8192 \
    --max-position-embeddings 8192 \
    --micro-batch-size 1 \
    --global-batch-size 768 \
    --train-iters 100000 \
    --lr 3e-4 \
    --tensor-model-parallel-size 2 \
    --use-distributed-optimizer \
    --bf16 \
    --fp8-format hybrid \
    --fp8-recipe mxfp8 \
    --fp8-param-gather \
    --reuse-grad-buf-for-mxfp8-param-ag \
    --overlap-param-gather \
    --overlap-grad-reduce \
    --mock-data \
    --tokenizer-type NullTokenizer \
    --vocab-size 131072
