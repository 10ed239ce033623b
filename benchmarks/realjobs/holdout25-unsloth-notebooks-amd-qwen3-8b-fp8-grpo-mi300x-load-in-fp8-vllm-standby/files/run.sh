#!/bin/bash
# fp8-doctor holdout25 (eval26): unslothai/notebooks @ bdda2efc7ad5ae129ea63cd2065d23c391406283, the AMD Dev Cloud
# export of the Qwen3 (8B) FP8 GRPO notebook, run as a script ("press Run All on AMD Dev Cloud").
python "python_scripts/AMD-Qwen3_8B_FP8_GRPO.py"
