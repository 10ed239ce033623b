#!/bin/bash
# fp8-doctor holdout13 (eval14): Lightning-AI/lightning-thunder @ 1e22aacb1aef6e79718a5ca2f49ab91b993cb4ef. docs/source/intermediate/benchmarking.rst's single-GPU
# form (`python thunder/benchmarks/benchmark_litgpt.py --model_name <model name> --compile ...`) with the script's TE
# low-precision mode: LowPrecisionHandler(mode="fp8-default-te") -> te.fp8_autocast(fp8_recipe=
# fp8.get_default_fp8_recipe()); --compile eager -> "TransformerEngine without Thunder" (TE layers swapped in).
python thunder/benchmarks/benchmark_litgpt.py --model_name Llama-3-8B --compile eager --low_precision_mode fp8-default-te \
  --n_layers 4 --micro_batch_size 1
