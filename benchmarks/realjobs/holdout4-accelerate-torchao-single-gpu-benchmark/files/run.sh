#!/bin/bash
# RECONSTRUCTION: the launch line for huggingface/accelerate@16cb6eb80dd9 as its docs give it (see job.yaml source.outcome).
# benchmarks/fp8/torchao/README.md: single GPU via python
cd benchmarks/fp8/torchao
python non_distributed.py
