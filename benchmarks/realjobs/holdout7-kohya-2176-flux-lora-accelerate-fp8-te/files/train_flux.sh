#!/bin/bash
# Reconstruction of kohya-ss/sd-scripts issue 2176 (2025-08-14): FLUX LoRA training with flux_train_network.py
# launched by accelerate with fp8 mixed precision ("Is sd-scripts support fp8 mixed precision via
# Accelerate?"). The traceback shows accelerate launch -> flux_train_network.py -> accelerator.prepare(flux)
# -> _prepare_te. Paths and LoRA options are placeholders.
accelerate launch --mixed_precision fp8 --num_cpu_threads_per_process 1 flux_train_network.py \
  --pretrained_model_name_or_path flux1-dev.safetensors \
  --clip_l clip_l.safetensors --t5xxl t5xxl_fp16.safetensors --ae ae.safetensors \
  --dataset_config dataset.toml --output_dir out --output_name flux-lora \
  --network_module networks.lora_flux --network_dim 16 \
  --optimizer_type adamw8bit --learning_rate 1e-4 \
  --mixed_precision fp8 --save_precision bf16 \
  --gradient_checkpointing --max_train_epochs 4
