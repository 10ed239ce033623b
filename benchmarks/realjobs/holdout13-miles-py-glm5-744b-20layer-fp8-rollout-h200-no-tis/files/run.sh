#!/bin/bash
# fp8-doctor holdout13 (eval14): radixark/miles @ 31f1ca961a94cb860cec3b2dea34ec332bfa8f76. scripts/run_glm5_744b_a40b.py docstring, usage II step 5 (`python
# scripts/run_glm5_744b_a40b.py train --model-name GLM-5_20layer --num-nodes 6`) with the documented --fp8-rollout
# ("converts HF checkpoint to FP8 block quant for sglang; megatron still uses bf16"); hardware default H200.
python scripts/run_glm5_744b_a40b.py train --model-name GLM-5_20layer --num-nodes 6 --fp8-rollout
