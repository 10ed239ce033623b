#!/bin/bash
# fp8-doctor holdout13 (eval14): Lightning-AI/lightning-thunder @ 1e22aacb1aef6e79718a5ca2f49ab91b993cb4ef. The torchao float8 + FSDP2 command of PR 997 (the PR that
# added the options: `torchrun --nproc-per-node 8 ... thunder/benchmarks/benchmark_litgpt.py --model_name
# Llama-2-7b-hf --compile inductor --distributed_mode fsdp2 --shard_mode zero2 --use_torchao_fp8_linear true
# --use_torchao_fp8_allgather true --use_torchao_fp8_precompute_scale_for_fsdp true`) with --compile eager, the
# script's default compile mode. CLI: jsonargparse CLI(benchmark_main) over Benchmark_litGPT's parameters.
torchrun --nproc-per-node 8 --local-ranks-filter 0 --role rank --tee 3 thunder/benchmarks/benchmark_litgpt.py \
  --model_name Llama-2-7b-hf --compile eager --distributed_mode fsdp2 --shard_mode zero2 \
  --use_torchao_fp8_linear true --use_torchao_fp8_allgather true --use_torchao_fp8_precompute_scale_for_fsdp true
