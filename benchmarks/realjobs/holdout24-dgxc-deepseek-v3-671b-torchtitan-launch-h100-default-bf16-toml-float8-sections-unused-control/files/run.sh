#!/bin/bash
# RECONSTRUCTION (eval25): NVIDIA/dgxc-benchmarking deepseek_v3/pretrain/torchtitan/README.md "Train on H100 GPUs
# (minimum configuration)" command, run from the recipe folder. DTYPE is not set, so launch.sh uses its bf16 default.
cd deepseek_v3/pretrain/torchtitan
GPU_TYPE=h100 JOB_TOTAL_GPUS=512 sbatch launch.sh
