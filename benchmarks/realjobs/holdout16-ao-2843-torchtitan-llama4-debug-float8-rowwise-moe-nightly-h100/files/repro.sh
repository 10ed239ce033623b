#!/bin/bash
# Command quoted in pytorch/ao issue 2843 (2025-08-21), run from a torchtitan main checkout of that day on an H100 node
# (torch nightly cu129, torchao built from main). The config file it names is copied at torchtitan 19bd2df67
# (2025-08-21 13:04 -0700, the last commit touching it on the day of the issue).
NGPU=8 CONFIG_FILE="./torchtitan/experiments/llama4/train_configs/debug_model.toml" ./run_train.sh --training.steps=50 --model.converters="float8" --float8.recipe_name="rowwise" --float8.moe_fqns_prototype="experts,shared_expert"
