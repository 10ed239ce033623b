#!/bin/bash
# RECONSTRUCTION (eval23): ROCm/Megatron-LM examples/llama/README.md section 3.1 Llama3 single-node command
# (TEE_OUTPUT=1 MBS=2 BS=128 TP=1 TE_FP8=1 SEQ_LENGTH=8192 MODEL_SIZE=8), with the two variables its section 4
# lists (TE_FP8_RECIPE: delayed / tensorwise / mxfp8; FP8_PARAM_GATHER), run from the Megatron-LM root on one
# MI300X node.
TEE_OUTPUT=1 MBS=2 BS=128 TP=1 TE_FP8=1 TE_FP8_RECIPE=mxfp8 FP8_PARAM_GATHER=1 SEQ_LENGTH=8192 MODEL_SIZE=8 bash examples/llama/train_llama3.sh
