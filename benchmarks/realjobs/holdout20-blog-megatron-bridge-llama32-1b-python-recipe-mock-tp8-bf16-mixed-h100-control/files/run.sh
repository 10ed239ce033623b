#!/bin/bash
# fp8-doctor holdout20 (eval21): verdimrc/playground-nemo-2.0-gh @ 6129a1ad5d345ee9628fa6fba4bbdc48a7d3bce3,
# 05-byoc-te-mb/with-ngc-pytorch-25.06-cleanup.md section 2.4: the launch line of the same code block (the
# author's train.py is written to /workspace/train.py; here it sits next to this script).
# NOTE: seq_length=1024 can run on tp=1. But tp=8 to speeds-up the script runtime, and the short
# wait time helps preventing my mind from getting distracted :P
torchrun --standalone --nproc_per_node=8 train.py
