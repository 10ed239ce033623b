#!/bin/bash
# fp8-doctor holdout25 (eval26): reconstructed from NVIDIA-NeMo/Megatron-Bridge issue 1685 ("GPT-OSS with FP8": "GPT-OSS
# currently works only with BF16. The FP8 run fails ..."), a perf-team run of the Megatron-Bridge performance scripts.
# The flags follow scripts/performance/setup_experiment.py of the time; the FP8 recipe is current scaling.
python scripts/performance/setup_experiment.py \
    --gpu b200 \
    --model_family_name gpt_oss \
    --model_recipe_name gpt_oss_120b \
    --gpus_per_node 8 \
    --num_gpus 64 \
    --compute_dtype fp8_cs \
    --expert_model_parallel_size 64 \
    --tensor_model_parallel_size 1 \
    --pipeline_model_parallel_size 1 \
    --max_steps 50
