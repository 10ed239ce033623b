#!/bin/bash
# The command in huggingface/accelerate examples/torch_native_parallelism/README.md
# (commit 1d57b830a07f07f655fc298f2096de09c2998083), "FSDP2 + ao Float8Linear", with fp8 chosen.
accelerate launch fsdp2_fp8.py --sequence-length 8192 --num-steps 1000 --log_with wandb --precision fp8
