#!/bin/bash
# fp8-doctor holdout18 (eval19): pytorch/torchtitan issue 1191 (2025-05-14), run from a torchtitan checkout of that day
# (7f761d69697b2fa483990031eea69b9744c500b3). run_train.sh's defaults: NGPU=8, CONFIG_FILE=./torchtitan/models/llama3/train_configs/debug_model.toml.
NGPU=8 CONFIG_FILE="./torchtitan/models/llama3/train_configs/debug_model.toml" ./run_train.sh
