#!/bin/bash
# huggingface/accelerate issue 3360: the reporter's own training script (not public, not in this job).
accelerate launch --config_file accelerate_ds.yaml train.py
