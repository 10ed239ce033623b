#!/bin/bash
# RECONSTRUCTION (eval25): a user of NVIDIA/dgxc-benchmarking running the Kimi-K2 recipe directly on an H100 cluster.
# launch.sh accepts GPU_TYPE=h100 (its GPUS_PER_NODE branch lists it) and defaults DTYPE=fp8, FP8_RECIPE=mx.
cd kimi-k2
GPU_TYPE=h100 JOB_TOTAL_GPUS=256 bash launch.sh
