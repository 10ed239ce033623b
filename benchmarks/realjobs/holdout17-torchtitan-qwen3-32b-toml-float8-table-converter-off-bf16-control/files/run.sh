#!/bin/bash
# fp8-doctor holdout17 (eval18): the launch pytorch/torchtitan's README gives (CONFIG_FILE=<toml> ./run_train.sh), pointed at
# torchtitan/models/qwen3/train_configs/qwen3_32b.toml of pytorch/torchtitan @ 2ea6197b957936bdd4941e59a000cf31987a3184 on
# one node of 8 GPUs. Reconstructed line; no override.
NGPU=8 CONFIG_FILE="./torchtitan/models/qwen3/train_configs/qwen3_32b.toml" ./run_train.sh
