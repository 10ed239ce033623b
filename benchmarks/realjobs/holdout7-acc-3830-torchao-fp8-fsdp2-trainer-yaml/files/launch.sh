#!/bin/bash
# Launch command quoted in huggingface/accelerate issue 3830 (2025-11-03); training.py (a transformers
# Trainer script of the reporter) is not public and not part of this job.
accelerate launch --config_file accelerate_fsdp2_fp8.conf \
    --rdzv_conf "join_timeout=900" \
    --num_machines $NUM_NODES \
    --num_processes $WORLD_SIZE \
    --main_process_ip $MASTER_ADDR \
    --main_process_port $MASTER_PORT \
    --machine_rank $RANK \
    training.py \
      --data_path "$DATA_PATH" \
      --logging_dir "$LOG_FULL_PATH" \
      --model_path "$LOCAL_MODEL_PATH" \
      --dataset_text_field "prompt" \
      --max_length 64 \
      --bf16 False
