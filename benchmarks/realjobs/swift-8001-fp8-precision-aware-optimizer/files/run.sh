#!/bin/bash
# The reproduction command of modelscope/ms-swift issue 8001 (2026-02-06), verbatim as far as the
# stored copy of the issue goes; its tail is cut after "--loss_scale last_round+igno", so the last
# flag is left out here. https://github.com/modelscope/ms-swift/issues/8001
megatron sft \
    --model Qwen3-14B-FP8 \
    --load_safetensors true \
    --save_safetensors true \
    --train_type full \
    --dataset data.json \
    --load_from_cache_file true \
    --fp8_format e4m3 \
    --fp8_recipe delayed \
    --fp8_param_gather true \
    --tensor_model_parallel_size 8 \
    --finetune true \
    --micro_batch_size 1 \
    --global_batch_size 160 \
    --packing true \
    --recompute_granularity selective \
    --max_epochs 4 \
    --cross_entropy_loss_fusion true \
    --cross_entropy_fusion_impl te \
    --lr 1e-5 \
    --lr_warmup_fraction 0.05 \
    --min_lr 1e-6 \
    --save Qwen3-14B-FP8-01 \
    --save_interval 1000 \
    --max_length 32768 \
    --use_precision_aware_optimizer true \
    --exp_avg_dtype bf16 \
    --exp_avg_sq_dtype bf16
# NOTE: the issue says the run works once "--use_precision_aware_optimizer true --exp_avg_dtype
# bf16 --exp_avg_sq_dtype bf16" are removed, so those three flags were in the failing command; their
# position in it is not visible in the stored copy.
