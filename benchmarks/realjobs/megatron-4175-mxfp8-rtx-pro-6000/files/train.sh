#!/bin/bash
# RECONSTRUCTION, not a copy: NVIDIA/Megatron-LM issue 4175 (2026-04-07) reports
#   "AssertionError: MXFP8 (for all gemm layouts) is not supported on 12.0+ architectures yet."
# when using MXFP8 on an RTX PRO 6000 (Blackwell, sm_120), and shows no command line. This is the
# smallest Megatron-LM launch that asks for what the issue describes (Megatron with the MXFP8
# recipe through Transformer Engine); model size and parallel layout are placeholders.
# https://github.com/NVIDIA/Megatron-LM/issues/4175
torchrun --nproc-per-node 1 pretrain_gpt.py \
    --transformer-impl transformer_engine \
    --num-layers 16 --hidden-size 2048 --ffn-hidden-size 8192 --num-attention-heads 16 \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 1 --global-batch-size 8 \
    --bf16 \
    --fp8-format e4m3 \
    --fp8-recipe mxfp8 \
    --mock-data --tokenizer-type NullTokenizer --vocab-size 131072
