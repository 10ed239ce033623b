#!/bin/bash
# fp8-doctor holdout20 (eval21): vibekernels/modded-nanogpt-vk @ 1e8179288e632d50d37e4a56a09c9fb9f07bbb8e,
# README.md "Training": the two commands run in the repository root of the RunPod 1 x H100 pod, verbatim.
python data/cached_fineweb10B.py 9
torchrun --standalone --nproc_per_node=1 train_gpt.py
