#!/bin/bash
# RECONSTRUCTION: Megatron-SWIFT full SFT of Qwen3-8B with the blockwise FP8 recipe that
# modelscope/ms-swift PR 6633 added (2025-11-25); the PR's docs line: 'blockwise fp8 needs CUDA
# 12.9 or newer'. Arguments are Megatron-SWIFT command-line parameters; torch is a cu128 build.
PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True' \
NPROC_PER_NODE=8 \
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 \
megatron sft \
    --model Qwen/Qwen3-8B \
    --load_safetensors true \
    --save_safetensors true \
    --dataset 'AI-ModelScope/alpaca-gpt4-data-en#5000' \
    --train_type full \
    --tensor_model_parallel_size 2 \
    --micro_batch_size 1 \
    --global_batch_size 16 \
    --packing true \
    --recompute_granularity full \
    --recompute_method uniform \
    --recompute_num_layers 1 \
    --fp8_format e4m3 \
    --fp8_recipe blockwise \
    --max_length 4096 \
    --lr 1e-5 \
    --min_lr 1e-6 \
    --max_epochs 1 \
    --save megatron_output/Qwen3-8B-blockwise \
    --cross_entropy_loss_fusion true
