#!/bin/bash
# RECONSTRUCTION (eval25): NVIDIA/dgxc-benchmarking deepseek_v3/pretrain/torchtitan/README.md "Train on B200 GPUs with
# FP8" command, run from the recipe folder (launch.sh takes LLMB_REPO=$PWD and the TOML from there).
cd deepseek_v3/pretrain/torchtitan
GPU_TYPE=b200 DTYPE=fp8 JOB_TOTAL_GPUS=256 sbatch launch.sh
