#!/bin/bash
# benchmarks/fp8/transformer_engine/README.md: `accelerate launch ddp.py # or distrib_deepspeed.py`
cd benchmarks/fp8/transformer_engine
accelerate launch distrib_deepspeed.py
