#!/bin/bash
# Command quoted in pytorch/torchtitan issue 1056 (2025-04-04), run from the torchtitan checkout on 8x H100.
CONFIG_FILE="./torchtitan/models/llama/train_configs/llama3_8b.toml" ./run_train.sh --training.steps=100 --training.batch_size=2 --training.compile --model.converters="float8" --float8.recipe_name rowwise
