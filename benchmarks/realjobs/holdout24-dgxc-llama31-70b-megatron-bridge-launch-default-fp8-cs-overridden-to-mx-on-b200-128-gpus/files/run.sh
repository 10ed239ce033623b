#!/bin/bash
# RECONSTRUCTION (eval25): NVIDIA/dgxc-benchmarking llama3.1 recipe run directly for Llama 3.1 70B on 16 B200 nodes with
# the script's defaults (DTYPE fp8, FP8_RECIPE cs); for b200/b300 + 70b + fp8 at >= 128 GPUs the script itself switches
# FP8_RECIPE to mx before building --compute_dtype.
cd llama3.1
GPU_TYPE=b200 MODEL_SIZE=70b JOB_TOTAL_GPUS=128 bash launch.sh
