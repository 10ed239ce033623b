#!/bin/bash
# fp8-doctor holdout11 (eval12): NVIDIA-NeMo/Megatron-Bridge @ 067f987df03b8355b03192d88d70f1709fedf51a,
# scripts/performance/README.md l.62-83 - the example bash file for a DeepSeek-V3 pre-training benchmark on
# 256 GB300 GPUs with MXFP8 (-c fp8_mx). Edits, all of the README's placeholders or typos: <slurm_account>,
# <slurm_partition>, </path/to/mbridge> and <HF_TOKEN> are given values, and the stray space after the
# backslash of `-g gb300 \ ` (l.79) is removed so the line continues as the README means.
CONTAINER="nvcr.io/nvidia/nemo:26.04"
MBRIDGE_PATH="/lustre/fsw/mbridge"

JOB_NAME="dsv3_gb300"
RESULTS_DIR="${MBRIDGE_PATH}/results/${JOB_NAME}"

uv run python scripts/performance/setup_experiment.py \
  --account my_account \
  -i ${CONTAINER} \
  --partition batch \
  -m deepseek \
  -mr deepseek_v3 \
  --log_dir ${RESULTS_DIR} \
  --num_gpus 256 \
  --gpus_per_node 4 \
  -t "00:15:00" \
  -g gb300 \
  -c fp8_mx \
  -hf "${HF_TOKEN}"
