#!/bin/bash
# RECONSTRUCTION: the launch line for huggingface/accelerate@16cb6eb80dd9 as its docs give it (see job.yaml source.outcome).
# benchmarks/fp8/transformer_engine/README.md (same layout for ms_amp): accelerate launch ddp.py
cd benchmarks/fp8/ms_amp
accelerate launch ddp.py
