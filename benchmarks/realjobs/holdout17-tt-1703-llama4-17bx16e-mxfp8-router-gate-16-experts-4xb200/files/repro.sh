#!/bin/bash
# Command quoted in pytorch/torchtitan issue 1703 (2025-09-12), run from a torchtitan main checkout of that day
# (pytorch/torchtitan @ bd3850be850f) with torchao main, on a node with 4+ B200. The issue also changes num_layers
# to 2 in torchtitan/experiments/llama4/__init__.py "to avoid OOMs" (a source edit, not reproduced here).
NGPU=4 CONFIG_FILE="./torchtitan/experiments/llama4/train_configs/llama4_17bx16e.toml" ./run_train.sh --parallelism.data_parallel_shard_degree=4 --parallelism.tensor_parallel_degree=1 --model.converters="mx" --mx.recipe_name="mxfp8_cublas" --model.print-after-conversion --metrics.log_freq=10 --training.steps=30
