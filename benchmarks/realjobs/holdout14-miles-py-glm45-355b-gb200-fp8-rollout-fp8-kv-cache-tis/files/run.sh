#!/bin/bash
# fp8-doctor holdout14 (eval15): RECONSTRUCTION of a launch of radixark/miles @ 31f1ca961a94cb860cec3b2dea34ec332bfa8f76, scripts/run_glm45_355b_a32b.py: the typer `train` command with the
# script's own switches rollout_fp8 (:31, block-FP8 checkpoint from tools/convert_hf_to_fp8.py, --hf-checkpoint
# .../GLM-4.5-FP8, :104-107) and rollout_attn_fp8 (:32, --sglang-kv-cache-dtype fp8_e4m3, :315-316) on the default
# hardware GB200 (:24).
python scripts/run_glm45_355b_a32b.py train --rollout-fp8 --rollout-attn-fp8
