#!/bin/bash
# fp8-doctor holdout14 (eval15): NVIDIA/TransformerEngine @ d0067d0da6cb01811b8072a7d304f0e00344ce2b, examples/pytorch/comm_gemm_overlap/README.md:19
# (`torchrun --nnodes=1 --nproc-per-node=$(nvidia-smi -L | wc -l) te_layer_with_overlap.py`) on one 8-GPU node
# as written (no --fp8).
cd examples/pytorch/comm_gemm_overlap
torchrun --nnodes=1 --nproc-per-node=8 te_layer_with_overlap.py
