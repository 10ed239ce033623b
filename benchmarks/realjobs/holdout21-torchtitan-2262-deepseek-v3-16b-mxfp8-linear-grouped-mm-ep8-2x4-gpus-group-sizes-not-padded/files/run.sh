#!/bin/bash
# RECONSTRUCTION of the launch in pytorch/torchtitan issue 2262 (2026-01-20): the reporter's torchrun command, with the
# parts the reporter elided ("...") left out; run from a torchtitan checkout at a25dd8f (torchtitan 0.2.1+gita25dd8f).
torchrun \
  --nnodes=2 \
  --nproc-per-node=4 \
  -m torchtitan.train \
  --job.config_file torchtitan/models/deepseek_v3/train_configs/deepseek_v3_16b.toml \
  --training.steps 50 \
  --model.converters="quantize.linear.mx,quantize.grouped_mm.mx" \
  --quantize.linear.mx.recipe_name="mxfp8_cublas" \
  --quantize.grouped_mm.mx.fqns="experts" \
  --parallelism.expert_parallel_degree 8
