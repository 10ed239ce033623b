#!/bin/bash
# fp8-doctor holdout13 (eval14): InternLM/xtuner @ b934f462095c1e750229de35367c50ae36caa786. examples/v1/scripts/run_sft.sh as shipped, without FP8=1: the config
# sft_qwen3p5.py leaves float8_cfg unset (`if _get_bool_env("FP8")` defaults to "0"): BF16 training.
export QWEN3_5_MOE_PATH=/mnt/models/Qwen3.5-35B-A3B
export ALPACA_PATH=/mnt/data/alpaca
bash examples/v1/scripts/run_sft.sh
