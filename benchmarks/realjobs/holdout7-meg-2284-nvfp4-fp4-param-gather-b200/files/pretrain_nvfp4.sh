#!/bin/bash
# Reconstruction of the setting of NVIDIA/Megatron-LM issue 2284 (2025-11-18, "--fp4-param-gather is not
# working correctly"; repro in NVIDIA/TransformerEngine issue 2352): NVFP4 training with --fp4-param-gather
# and the distributed optimizer on Blackwell. The FP4 flags are the ones the issues name; model/data flags
# are placeholders.
export CUDA_DEVICE_MAX_CONNECTIONS=1
torchrun --nproc_per_node 8 pretrain_gpt.py \
    --num-layers 32 \
    --hidden-size 4096 \
    --ffn-hidden-size 14336 \
    --num-attention-heads 32 \
    --seq-length 4096 \
    --max-position-embeddings 4096 \
    --micro-batch-size 1 \
    --global-batch-size 256 \
    --train-iters 20000 \
    --lr 3e-4 \
    --use-distributed-optimizer \
    --bf16 \
    --fp4-format e2m1 \
    --fp4-recipe nvfp4 \
    --fp4-param-gather \
    --mock-data \
    --tokenizer-type NullTokenizer \
    --vocab-size 128256
