#!/bin/bash
# fp8-doctor holdout13 (eval14): radixark/miles @ 31f1ca961a94cb860cec3b2dea34ec332bfa8f76. scripts/run_joy_ai_llm_flash.py (typer over the ScriptArgs dataclass)
# with the two switches its end-to-end test sets (tests/e2e/megatron/test_joyai_llm_flash_mxfp8.py: ScriptArgs(
# rollout_mxfp8=True, train_mxfp8=True, ...)): MXFP8 SGLang rollout from the -MXFP8 checkpoint and Megatron MXFP8
# training (`match args.hardware` B200 arm: --fp8-format e4m3 --fp8-recipe mxfp8 --first-last-layers-bf16);
# enable_mis stays False (no TIS/MIS config).
python scripts/run_joy_ai_llm_flash.py --rollout-mxfp8 --train-mxfp8
