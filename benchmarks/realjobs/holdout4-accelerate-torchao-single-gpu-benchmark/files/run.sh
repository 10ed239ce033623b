#!/bin/bash
# benchmarks/fp8/torchao/README.md: single GPU via python
cd benchmarks/fp8/torchao
python non_distributed.py
