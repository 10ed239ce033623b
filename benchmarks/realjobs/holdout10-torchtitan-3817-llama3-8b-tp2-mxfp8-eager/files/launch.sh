#!/bin/bash
# RECONSTRUCTION of the run in pytorch/torchtitan issue 3817 (2026-06-29): 'Enabling TP with MXFP8 on
# llama3 8B training crashes' with "mat2 must be col_major, got stride (4096, 1)" (rank 7 of 8).
# The config is the user's llama3_8b_mxfp8 (config_registry.py); no torch.compile.
NGPU=8 MODULE=llama3 CONFIG=llama3_8b_mxfp8 ./run_train.sh --parallelism.tensor_parallel_degree 2
