#!/bin/bash
# fp8-doctor holdout14 (eval15): Lightning-AI/pytorch-lightning @ 7f0c3436cd3f6ad3753125672024fc415cbcb414, examples/fabric/fp8_distributed_transformer/README.md
# ("To execute the code directly just run: python train.py"); Fabric launches the 4 ranks itself
# (ModelParallelStrategy(data_parallel_size=4), fabric.launch()).
cd examples/fabric/fp8_distributed_transformer
python train.py
