#!/bin/bash
# Reconstruction of huggingface/accelerate issue 3827 (2025-11-01): the user's code "follows exactly"
# https://huggingface.co/blog/accelerate-nd-parallel; TE FP8 + FSDP2 + TP=2 on 8x H200.
accelerate launch --num_processes 8 train.py
