#!/bin/bash
# RECONSTRUCTION: NVIDIA-NeMo/RL's GRPO entry point (uv run examples/run_grpo_math.py --config <yaml>, as the repository's
# README and test scripts launch it) with the FP8 config PR 971 ships, in NeMo-RL's own uv environment of that commit
# (NVIDIA-NeMo/RL @ 16e08cdd460a: torch==2.7.1 from the cu128 index, transformer-engine 2.5.0, vLLM 0.10.0).
uv run examples/run_grpo_math.py --config examples/configs/grpo_math_8B_megatron_fp8.yaml
