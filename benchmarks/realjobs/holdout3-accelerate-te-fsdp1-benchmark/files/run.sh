#!/bin/bash
# RECONSTRUCTION of the run huggingface/accelerate benchmarks/fp8/transformer_engine/README.md gives
# ("accelerate launch ddp.py # or distrib_deepspeed.py ...", no accelerate config needed), for fsdp.py.
accelerate launch fsdp.py
