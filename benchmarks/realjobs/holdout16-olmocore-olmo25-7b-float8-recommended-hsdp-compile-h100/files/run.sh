#!/bin/bash
# fp8-doctor holdout16 (eval17): allenai/OLMo-core @ 9271e98866ff42e8e49116c2dd0f1e6172ce6c47.
# OLMo-core training scripts run as `python <script> <subcommand> <run name> <cluster>` (olmo_core.internal.experiment
# main at 2.1.0); `launch` submits the Beaker job on the named cluster, ai2/jupiter-cirrascale-2 is H100
# (src/olmo_core/internal/common.py CLUSTER_TO_GPU_TYPE at this commit).
python src/scripts/train/OLMo2.5-7B-float8.py launch olmo25-7b-float8 ai2/jupiter-cirrascale-2
