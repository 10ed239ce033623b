#!/bin/bash
# Faithful reduction of sbhavani/llamafactory-fp8-hopper scripts/train_fp8_proper.sh at commit
# 90a462ffe972506c15b3f97e7304c06dc60cc88d: the echo lines and cache-directory setup are dropped;
# the environment and the launch command are kept verbatim, but for --config_file, which names the
# YAML beside it instead of /workspace/configs/accelerate_fp8.yaml.
set -e
CONFIG_FILE=${1:-"/workspace/configs/qwen_7b_fp8_full_benchmark.yaml"}
export PYTORCH_ALLOC_CONF=expandable_segments:True
export TOKENIZERS_PARALLELISM=false
export NVTE_DEBUG=1
export NVTE_DEBUG_LEVEL=2
export HF_HOME=/tmp/huggingface

# Use accelerate launch with explicit config
# This is the OFFICIAL way to use FP8 with Trainer!
accelerate launch \
  --config_file accelerate_fp8.yaml \
  /workspace/LLaMA-Factory/src/train.py \
  --stage sft \
  --do_train true \
  --model_name_or_path Qwen/Qwen2.5-7B \
  --preprocessing_num_workers 16 \
  --finetuning_type full \
  --template qwen \
  --flash_attn auto \
  --dataset_dir /workspace/LLaMA-Factory/data \
  --dataset alpaca_en_demo \
  --cutoff_len 1024 \
  --learning_rate 5e-05 \
  --num_train_epochs 1 \
  --max_samples 1000 \
  --per_device_train_batch_size 4 \
  --gradient_accumulation_steps 4 \
  --lr_scheduler_type cosine \
  --warmup_ratio 0.1 \
  --bf16 true \
  --logging_steps 5 \
  --save_steps 1000 \
  --output_dir /workspace/checkpoints/qwen-7b-fp8-proper \
  --overwrite_output_dir true \
  --ddp_timeout 180000000 \
  --plot_loss true 2>&1 | tee /tmp/fp8_proper.log
