#!/bin/bash
# RECONSTRUCTION: huggingface/trl trl/scripts/sft.py's documented full-training command, launched with the
# repository's DeepSpeed ZeRO-3 accelerate config (examples/accelerate_configs/deepspeed_zero3.yaml), as TRL's
# docs do for multi-GPU runs.
accelerate launch --config_file examples/accelerate_configs/deepspeed_zero3.yaml trl/scripts/sft.py \
    --model_name_or_path Qwen/Qwen2-0.5B \
    --dataset_name trl-lib/Capybara \
    --learning_rate 2.0e-5 \
    --num_train_epochs 1 \
    --packing \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 8 \
    --eos_token '<|im_end|>' \
    --eval_strategy steps \
    --eval_steps 100 \
    --output_dir Qwen2-0.5B-SFT
