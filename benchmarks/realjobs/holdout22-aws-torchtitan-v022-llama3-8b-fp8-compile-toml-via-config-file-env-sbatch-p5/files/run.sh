#!/bin/bash
# RECONSTRUCTION (eval23): the launch line the test case's README (section 3) gives for the FP8 + torch.compile
# variant, run from 3.test_cases/pytorch/torchtitan/slurm after `bash 0.create_venv.sh`.
CONFIG_FILE="$(pwd)/configs/llama3_8b_fp8_compile.toml" sbatch 1.llama_3_8b_torchtitan.sh
