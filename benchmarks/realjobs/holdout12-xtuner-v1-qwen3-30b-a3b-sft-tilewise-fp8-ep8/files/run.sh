#!/bin/bash
# fp8-doctor holdout12 (eval13): InternLM/xtuner @ b934f462095c1e750229de35367c50ae36caa786. autotest/config.yaml
# case qwen3-sft-fp8 (type sft, config autotest/config/qwen3_fp8.py, 2 nodes, the envs below) run through xtuner's SFT
# entry the docs launch with torchrun (docs/en/get_started/installation.md l.106: `torchrun xtuner/v1/train/cli/sft.py
# --config <py>`). The config builds Float8Config(scaling_granularity_gemm=TILEWISE, ..._grouped_gemm=TILEWISE) into
# Qwen3MoE30BA3Config(float8_cfg=..., ep_size=8, compile_cfg=False).
export QWEN3_MOE_PATH=/mnt/shared/model/Qwen3-30B-A3B
export ALPACA_PATH=/mnt/shared/data/alpaca
export WORK_DIR=/mnt/shared/test_output
export XTUNER_DETERMINISTIC=true
export XTUNER_ACTIVATION_OFFLOAD=1
torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint $MASTER_ADDR:29500 \
  xtuner/v1/train/cli/sft.py --config autotest/config/qwen3_fp8.py
