#!/bin/bash
# fp8-doctor holdout17 (eval18): radixark/miles @ 31f1ca961a94cb860cec3b2dea34ec332bfa8f76. Launch of scripts/run_deepseek.py's
# typer command `train` (as tests/snapshots/launch_scripts/py/scripts/run_deepseek.py/train.txt records it), on 16 nodes of
# 4 GPUs (the script's num_gpus_per_node default; num_nodes otherwise comes from SLURM_JOB_NUM_NODES). Reconstructed line.
python scripts/run_deepseek.py train --num-nodes 16
