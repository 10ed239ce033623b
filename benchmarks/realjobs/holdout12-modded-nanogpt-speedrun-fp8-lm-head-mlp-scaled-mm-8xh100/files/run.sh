#!/bin/bash
# fp8-doctor holdout12 (eval13): KellerJordan/modded-nanogpt @ f411b3d346aa52d3504324ca93c230fd84c6c07f, run.sh verbatim
# (the speedrun's launch on 8 H100). train_gpt.py casts the lm_head and the MLP projections to FP8 and multiplies them
# with torch._scaled_mm (its own autograd ops, l.67-135 of the original) unless DISABLE_FP8 is set in the environment
# (l.1224 and l.1498).
torchrun --standalone --nproc_per_node=8 train_gpt.py
