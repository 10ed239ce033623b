#!/bin/bash
# Command quoted in pytorch/ao issue 2453 (2025-06-27), run from a torchtitan main checkout of that day
# (the TOML it names is copied at pytorch/torchtitan @ aefe15a32282, 2025-06-26) with torchao main, on 4 GPUs.
NGPU=4 CONFIG_FILE="./torchtitan/experiments/llama4/train_configs/debug_model.toml" ./run_train.sh --training.steps=100 --model.converters="float8" --float8.recipe_name="rowwise" --float8.moe_fqns_prototype="shared_expert"
