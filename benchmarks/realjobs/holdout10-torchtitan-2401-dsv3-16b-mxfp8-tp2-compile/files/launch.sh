#!/bin/bash
# Source: pytorch/torchtitan issue 2401 (2026-02-19), the training command of the repro, run on
# 8 x B200 against torchtitan 71517cf6 as it ships (the issue comments out the assertion in
# torchtitan/components/quantization/mx.py L51 to get further; this job does not).
CONFIG_FILE=./torchtitan/models/deepseek_v3/train_configs/deepseek_v3_16b.toml ./run_train.sh --metrics.log_freq=10 \
--training.steps=100  \
--parallelism.data_parallel_shard_degree=4 \
--parallelism.expert_parallel_degree=4 \
--parallelism.tensor_parallel_degree=2 \
--parallelism.expert_tensor_parallel_degree=1 \
--training.seq_len=8192 \
--activation_checkpoint.mode=full \
--model.print_after_conversion \
--training.local_batch_size=2 \
--model.converters="quantize.linear.mx" \
--quantize.linear.mx.mxfp8_dim1_cast_kernel_choice="cuda" \
--compile.enable --compile.components="model,loss" --debug.moe_force_load_balance
