#!/bin/bash
# RECONSTRUCTION (job reduction) of how LambdaLabsML/torchtitan's gb300/run_1k.slurm is submitted, following its
# own header comment; the config is the MXFP8 variant of gpt_oss_20b that gb300/TUNING_RESULTS.md records
# (jobs 42-43). MXFP8 is left at the script's default (0), i.e. the venv's torchao 0.18.0 wheel is used.
WORKTREE=/mnt/dgxc/worktrees/gptoss120b-1k \
  CONFIG=gpt_oss_20b_gb300_mxfp8 STEPS=250 \
  sbatch gb300/run_1k.slurm
