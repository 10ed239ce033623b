#!/bin/bash
# RECONSTRUCTION, not a copy: modelscope/ms-swift issue 9723 (2026-07-10) gives the trigger
# conditions, not a command: "--fp8_recipe mxfp8" + "--packing/--padding_free" + "--sequence_parallel"
# with TP > 1 (its example: TP=4, a (7984, 3072) activation). This is the smallest ms-swift command
# with exactly those settings; the model is a placeholder with hidden size 3072.
# https://github.com/modelscope/ms-swift/issues/9723
NPROC_PER_NODE=8 \
megatron sft \
    --model meta-llama/Llama-3.2-3B \
    --dataset 'swift/self-cognition#1000' \
    --fp8_format e4m3 \
    --fp8_recipe mxfp8 \
    --tensor_model_parallel_size 4 \
    --sequence_parallel true \
    --packing true \
    --micro_batch_size 1 \
    --global_batch_size 16 \
    --max_length 8192 \
    --train_type full \
    --finetune true
