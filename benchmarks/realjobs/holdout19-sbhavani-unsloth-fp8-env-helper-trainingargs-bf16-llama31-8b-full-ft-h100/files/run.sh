#!/bin/bash
# fp8-doctor holdout19 (eval20): sbhavani/unsloth @ 8cb627e88c667da5625ef876784752d255bf3862. The launch line is the one
# examples/FP8_FINDINGS.md gives for this script ("python /workspace/unsloth/examples/llama_8b_full_finetune_fp8.py"),
# run from the repository root.
python examples/llama_8b_full_finetune_fp8.py
