#!/bin/bash
# RECONSTRUCTION: the script above run on one GPU (unslothai/unsloth PR 3440).
python grpo_fp8.py
