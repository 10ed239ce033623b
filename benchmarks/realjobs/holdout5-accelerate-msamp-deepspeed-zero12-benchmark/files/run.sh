# RECONSTRUCTION: the launch line for huggingface/accelerate@16cb6eb80dd9 (see job.yaml source.outcome).
accelerate launch benchmarks/fp8/ms_amp/distrib_deepspeed.py
