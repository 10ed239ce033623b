#!/bin/bash
# The "Full training" command of huggingface/trl v1.9.0 trl/scripts/sft.py's docstring, started
# with accelerate and FP8 (the flags after sft.py are TRL's own example).
accelerate launch --mixed_precision fp8 sft.py \
    --model_name_or_path Qwen/Qwen2-0.5B \
    --dataset_name trl-lib/Capybara \
    --learning_rate 2.0e-5 \
    --num_train_epochs 1 \
    --packing \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 8 \
    --output_dir Qwen2-0.5B-SFT
