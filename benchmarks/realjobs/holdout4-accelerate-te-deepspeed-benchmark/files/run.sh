#!/bin/bash
# RECONSTRUCTION: the launch line for huggingface/accelerate@16cb6eb80dd9 as its docs give it (see job.yaml source.outcome).
# benchmarks/fp8/transformer_engine/README.md: `accelerate launch ddp.py # or distrib_deepspeed.py`
cd benchmarks/fp8/transformer_engine
accelerate launch distrib_deepspeed.py
