#!/bin/bash
# benchmarks/fp8/transformer_engine/README.md (same layout for ms_amp): accelerate launch ddp.py
cd benchmarks/fp8/ms_amp
accelerate launch ddp.py
