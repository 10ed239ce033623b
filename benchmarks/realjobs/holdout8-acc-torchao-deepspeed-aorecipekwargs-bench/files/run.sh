#!/bin/bash
# fp8-doctor holdout8: the launch line of huggingface/accelerate benchmarks/fp8/torchao/README.md
# @ 16cb6eb80dd9aa8b4df1a63ef57863e455d53b83 ("accelerate launch ddp.py # or distrib_deepspeed.py, ddp.py").
accelerate launch distrib_deepspeed.py
