#!/bin/bash
# fp8-doctor holdout11 (eval12): unslothai/unsloth issue 3902 - single GPU (RTX PRO 6000 / RTX 5090);
# the traceback lines are prefixed [rank0], so the script ran under torchrun with one process.
torchrun --nproc_per_node 1 train_grpo_with_probe.py
