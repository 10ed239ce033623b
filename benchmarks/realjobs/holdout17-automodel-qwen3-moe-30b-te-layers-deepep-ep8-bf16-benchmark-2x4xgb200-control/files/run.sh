#!/bin/bash
# fp8-doctor holdout17 (eval18): launch of NVIDIA-NeMo/Automodel @ 36044ad3d139's benchmark config with the `automodel` CLI
# (as the repository's recipes give it), on each of 2 nodes x 4 GB200 (the config's num_nodes 2). Reconstructed line.
automodel examples/llm_benchmark/qwen/qwen3_moe_30b_te_deepep_gb200.yaml --nproc-per-node 4
