#!/bin/bash
# fp8-doctor holdout18 (eval19): AMD-AIG-AIMA/pytorch-training-benchmark @ 927d18fb7bf3d64bd65cbd6f57ac15e108de9311, README.md
# (the 'Mistral ... MI300 ... FP8 Precision' command, verbatim; one 8x MI300X node, torchrun).
torchrun --nnodes=1  --node_rank=0 --nproc_per_node=8  --master_addr="0.0.0.0"     --master_port="12234"  ./train_fsdp.py \
    configs/mistral-7b-v0.1.json mistral  --batch_size 4 --enable_fp8 True |& tee -a  ./mistral_fp8.log
