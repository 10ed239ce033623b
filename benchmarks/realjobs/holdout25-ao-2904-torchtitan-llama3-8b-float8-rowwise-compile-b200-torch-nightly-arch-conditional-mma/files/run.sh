#!/bin/bash
# fp8-doctor holdout25 (eval26): reconstructed from pytorch/ao issue 2904 ("float8 rowwise on B200: ERROR : Arch
# conditional MMA instruction used without targeting appropriate compute capability. Aborting"): e2e float8 rowwise
# training with torchao main and a torch nightly of 2025-08-27, in torchtitan as torchao's float8 docs launch it.
CONFIG_FILE="./torchtitan/models/llama3/train_configs/llama3_8b.toml" ./run_train.sh \
    --model.converters="float8" \
    --float8.recipe_name="rowwise" \
    --training.compile
