#!/bin/bash
# fp8-doctor holdout11 (eval12): snowflakedb/ArcticTraining @ 46f16d44de9d45ebc7f118deeed7615de965ce0f, news/qwen3-32b-dgx-station/run-qwen3-32b.sh (verbatim below this line)

export PYTORCH_ALLOC_CONF=expandable_segments:True
#export HF_HOME=/data/huggingface

/usr/bin/time -v arctic_training run-qwen3-32b.yml --num_gpus 1 --master_port 9828 -q |& tee run-qwen3-32b.log
