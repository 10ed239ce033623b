#!/bin/bash
# RECONSTRUCTION (pytorch/ao issue 1605): launch of train.py on one node; the issue gives no launch line.
torchrun --nproc_per_node 8 train.py
