#!/bin/bash
# fp8-doctor holdout13 (eval14): THUDM/slime @ 624b824a898ab0ec1fcb4d373004c7f3852bf515. The repo's train/infer mismatch example run as shipped: --hf-checkpoint
# /root/Qwen3-4B (the -FP8 line is commented out), --use-tis plus the MIS custom config; Megatron BF16 (no --fp8-*).
bash examples/train_infer_mismatch_helper/run-qwen3-4b-mis.sh
