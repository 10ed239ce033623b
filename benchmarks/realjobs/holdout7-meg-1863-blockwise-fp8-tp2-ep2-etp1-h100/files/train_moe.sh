#!/bin/bash
# Reconstruction of the launch of NVIDIA/Megatron-LM issue 1863 (2025-10-14): MoE training on Hopper with
# blockwise FP8 + --fp8-param-gather, TP 2, EP 2, expert TP 1, alltoall dispatcher. The FP8/parallel flags
# are the ones quoted in the issue; model sizes and data flags are placeholders (not quoted);
# --use-distributed-optimizer added (megatron-core requires it for --fp8-param-gather; the run got past
# argument validation to the forward pass, so it was set).
export CUDA_DEVICE_MAX_CONNECTIONS=1

torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py \
   --num-layers 16 \
   --hidden-size 2048 \
   --ffn-hidden-size 6144 \
   --num-attention-heads 16 \
   --seq-length 4096 \
   --max-position-embeddings 4096 \
   --num-experts 16 \
   --moe-router-topk 2 \
   --moe-grouped-gemm \
   --micro-batch-size 1 \
   --global-batch-size 64 \
   --train-iters 1000 \
   --lr 1e-4 \
   --bf16 \
   --tensor-model-parallel-size 2 \
   --expert-model-parallel-size 2 \
   --expert-tensor-parallel-size 1 \
   --sequence-parallel \
   --moe-token-dispatcher-type alltoall \
   --use-distributed-optimizer \
   --fp8-param-gather \
   --fp8-recipe blockwise \
   --fp8-format e4m3 \
   --mock-data \
   --tokenizer-type NullTokenizer \
   --vocab-size 32000
