#!/bin/bash
# Source: ROCm/Megatron-LM @ 10b9213c1deb36ebaecc4d7cc89a035feedb8849 examples/llama/README.md section 3.1, the
# Llama3/3.1 single-node command verbatim, run from the Megatron-LM root on one MI300X node.
TEE_OUTPUT=1 MBS=2 BS=128 TP=1 TE_FP8=1 SEQ_LENGTH=8192 MODEL_SIZE=8  bash examples/llama/train_llama3.sh
