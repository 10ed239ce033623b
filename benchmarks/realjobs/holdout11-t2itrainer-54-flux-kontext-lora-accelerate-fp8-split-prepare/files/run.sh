#!/bin/bash
# fp8-doctor holdout11 (eval12): lrzjason/T2ITrainer issue 54 (2025-07-14, "ValueError: You must pass a
# model and an optimizer together to `accelerate.prepare()` when using TransformerEngine"). The UI
# (ui_flux_fill.py @ 393fcf694ccaee0670338ed3cb456c7fae0d9965, l.417-479) runs
# [sys.executable, script] + "--key value" for each field (True booleans as bare flags, None and False
# left out) and saves config.json; this is that command for the UI's default_config (l.166-216) with the
# user's choice mixed_precision fp8 (the script's --mixed_precision choices are bf16 and fp8, l.352-362).
python train_flux_lora_ui_kontext.py \
  --seed 4321 \
  --mixed_precision fp8 \
  --report_to all \
  --lr_warmup_steps 0 \
  --output_dir F:/models/flux \
  --save_name flux-lora \
  --train_data_dir F:/ImageSet/kontext \
  --optimizer adamw \
  --lr_scheduler constant \
  --learning_rate 0.0001 \
  --train_batch_size 1 \
  --repeats 1 \
  --gradient_accumulation_steps 1 \
  --num_train_epochs 5 \
  --save_model_epochs 1 \
  --validation_epochs 1 \
  --rank 16 \
  --skip_epoch 0 \
  --skip_step 0 \
  --gradient_checkpointing \
  --validation_ratio 0.1 \
  --pretrained_model_name_or_path F:/T2ITrainer/flux_models/kontext \
  --resolution 512 \
  --caption_dropout 0.1 \
  --cosine_restarts 1 \
  --max_time_steps 0 \
  --blocks_to_swap 0 \
  --mask_dropout 0 \
  --reg_ratio 0.0 \
  --reg_timestep 0
