#!/bin/bash
# RECONSTRUCTION of the launch the script's header documents (verl-project/verl
# examples/grpo_trainer/run_qwen3_30b_a3b_megatron.sh, knobs INFER_BACKEND and ROLLOUT_QUANTIZATION).
INFER_BACKEND=trtllm ROLLOUT_QUANTIZATION=fp8 bash run_qwen3_30b_a3b_megatron.sh
