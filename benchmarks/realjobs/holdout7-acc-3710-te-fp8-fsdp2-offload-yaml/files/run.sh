#!/bin/bash
# huggingface/accelerate issue 3710 (2025-08-05): FSDP2 + TE FP8 from the accelerate config quoted in
# the issue; the training script is the reporter's (not public, not part of this job).
accelerate launch --config_file fsdp2_fp8.yaml train.py
