#!/bin/bash
# RECONSTRUCTION (eval23): NVIDIA-NeMo/Megatron-Bridge issue 574's reproduction steps ("Run training with
# bf16_with_mxfp8_mixed ... Ensure overlap_param_gather=True in DDP config ... Train until a checkpoint save is
# triggered") written as the Hydra-style key=value overrides that examples/recipes/llama/pretrain_llama3_8b.py
# documents, on one 8 x B200 node, from a Megatron-Bridge checkout of the date.
torchrun --nproc-per-node=8 examples/recipes/llama/pretrain_llama3_8b.py \
    mixed_precision=bf16_with_mxfp8_mixed \
    ddp.overlap_param_gather=true \
    train.train_iters=1000 \
    checkpoint.save=/workspace/ckpt/llama3_8b_mxfp8 \
    checkpoint.save_interval=200
