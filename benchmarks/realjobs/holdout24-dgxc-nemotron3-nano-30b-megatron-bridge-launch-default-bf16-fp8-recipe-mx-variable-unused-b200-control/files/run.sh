#!/bin/bash
# RECONSTRUCTION (eval25): NVIDIA/dgxc-benchmarking nemotron3 recipe run directly for Nemotron 3 Nano 30B on two B200
# nodes with the script's defaults (DTYPE bf16; FP8_RECIPE defaults to mx but is only used when DTYPE=fp8).
cd nemotron3
GPU_TYPE=b200 JOB_TOTAL_GPUS=16 bash launch.sh
