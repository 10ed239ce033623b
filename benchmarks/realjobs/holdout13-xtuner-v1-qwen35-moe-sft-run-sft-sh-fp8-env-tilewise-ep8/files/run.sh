#!/bin/bash
# fp8-doctor holdout13 (eval14): InternLM/xtuner @ b934f462095c1e750229de35367c50ae36caa786. The repo's SFT launcher examples/v1/scripts/run_sft.sh (torchrun -m
# xtuner.v1.train.cli.sft --config examples/v1/config/sft_qwen3p5.py by default) with the config's own switches:
# FP8=1 makes the config build Float8Config(TILEWISE, TILEWISE) (sft_qwen3p5.py `if _get_bool_env("FP8")`), EP_SIZE=8.
export QWEN3_5_MOE_PATH=/mnt/models/Qwen3.5-35B-A3B
export ALPACA_PATH=/mnt/data/alpaca
FP8=1 EP_SIZE=8 bash examples/v1/scripts/run_sft.sh
