#!/bin/bash
# RECONSTRUCTION: the launch line for huggingface/trl@f2cd57710ae3 as its docs give it (see job.yaml source.outcome).
accelerate launch --config_file examples/accelerate_configs/fsdp2.yaml trl/scripts/grpo.py \
    --model_name_or_path Qwen/Qwen2-0.5B-Instruct \
    --dataset_name trl-lib/DeepMath-103K \
    --output_dir Qwen2-0.5B-GRPO
