#!/bin/bash
# fp8-doctor holdout11 (eval12): allenai/OLMo-core @ df4de50cb198d3fc1796553a53aa1e27b4b67e78.
# src/scripts/train/ladder/2026Q1/mxfp8_ladder.py ("This ladder has been run under the name
# olmo3-mxfp8-all-linear") launched through olmo_core.internal.ladder's `launch` sub-command on the B200
# cluster (olmo_core/internal/common.py CLUSTER_TO_GPU_TYPE: ai2/titan -> "NVIDIA B200"; the default
# ai2/jupiter is H100). Float8Config(enabled=True, ao_mx=AOMXLinearConfig.mxfp8_cublas_rceil()) with
# compile_model=True and FSDP (l.47-65).
python src/scripts/train/ladder/2026Q1/mxfp8_ladder.py launch --name olmo3-mxfp8-all-linear --cluster ai2/titan
