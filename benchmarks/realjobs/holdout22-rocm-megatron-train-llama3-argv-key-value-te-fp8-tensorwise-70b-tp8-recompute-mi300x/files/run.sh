#!/bin/bash
# RECONSTRUCTION (eval23): ROCm/Megatron-LM examples/llama/README.md (10b9213c) section 3.1's Llama3 command with the
# recipe its section 4 lists as the third option (TE_FP8_RECIPE: delayed / tensorwise / mxfp8) and a larger model,
# passed as key=value arguments, which the script's argv loop exports; one MI300X node.
bash examples/llama/train_llama3.sh TEE_OUTPUT=1 MBS=1 BS=64 TP=8 TE_FP8=1 TE_FP8_RECIPE=tensorwise SEQ_LENGTH=8192 MODEL_SIZE=70 RECOMPUTE=1
