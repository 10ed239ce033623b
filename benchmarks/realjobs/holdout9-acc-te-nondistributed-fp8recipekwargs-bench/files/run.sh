#!/bin/bash
# RECONSTRUCTION (huggingface/accelerate @ 16cb6eb80dd9aa8b4df1a63ef57863e455d53b83): how
# benchmarks/fp8/transformer_engine/README.md runs the single-GPU benchmark.
cd benchmarks/fp8/transformer_engine
python non_distributed.py
