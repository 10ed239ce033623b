#!/bin/bash
# RECONSTRUCTION: pytorch/ao issue 3982 runs the repro on 3 GPUs ("crashes with world_size=3").
torchrun --nproc_per_node=3 repro.py
