#!/usr/bin/env bash
# Source: crusoecloud/crusoe-mlops-code-assistant @ 09478ed28c78b906d14438a39e194a8a598a4261 kubernetes/finetune-llm/app/train.sh
set -euo pipefail

export HF_HOME
export HF_TOKEN

accelerate launch --mixed_precision="${MIXED_PRECISION}" --num_machines=1 --num_processes=2 main.py
