#!/bin/bash
# fp8-doctor holdout8, reconstruction of NVIDIA/Megatron-LM issue 2582 ("fp8-param-gather for mxfp8",
# 2025-12-07): slime RL training (MegatronTrainRayActor) on B200. The issue quotes two messages, which
# fix the flags below:
#   AssertionError: When `--fp8-param-gather` is enabled, the optimizer cpu offload must be used in
#     conjunction with `--fp8-recipe delayed`.
#   UserWarning: mxfp8 without using reuse_grad_buf_for_mxfp8_param_ag and fp8_param_gather will use
#     significant amount additional GPU memory.
# The first assertion is reached only after the one that requires --use-precision-aware-optimizer with
# --optimizer-cpu-offload (megatron/training/arguments.py), so that flag was on too. Model, data and
# rollout arguments are not in the issue and are left out; the layout follows slime's scripts.

PRECISION_ARGS=(
   --fp8-format e4m3
   --fp8-recipe mxfp8
   --fp8-param-gather
)

OPTIMIZER_ARGS=(
   --optimizer adam
   --lr 1e-6
   --use-distributed-optimizer
   --optimizer-cpu-offload
   --overlap-cpu-optimizer-d2h-h2d
   --use-precision-aware-optimizer
)

ray job submit --address="http://127.0.0.1:8265" \
   -- python3 train.py \
   --actor-num-nodes 1 \
   --actor-num-gpus-per-node 8 \
   --colocate \
   ${PRECISION_ARGS[@]} \
   ${OPTIMIZER_ARGS[@]}
