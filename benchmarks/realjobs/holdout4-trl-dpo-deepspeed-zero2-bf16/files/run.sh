#!/bin/bash
# RECONSTRUCTION: the launch line for huggingface/trl@f2cd57710ae3 as its docs give it (see job.yaml source.outcome).
accelerate launch --config_file examples/accelerate_configs/deepspeed_zero2.yaml trl/scripts/dpo.py \
    --dataset_name trl-lib/ultrafeedback_binarized \
    --model_name_or_path Qwen/Qwen2-0.5B-Instruct \
    --learning_rate 5.0e-7 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 2 \
    --max_steps 1000 \
    --gradient_accumulation_steps 8 \
    --eval_strategy steps \
    --eval_steps 50 \
    --output_dir Qwen2-0.5B-DPO \
    --no_remove_unused_columns
