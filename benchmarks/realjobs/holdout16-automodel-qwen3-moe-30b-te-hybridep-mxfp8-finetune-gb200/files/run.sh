#!/bin/bash
# fp8-doctor holdout16 (eval17): NVIDIA-NeMo/Automodel @ fb9a8e024f4576735067b07d21d8b432d50a616a,
# examples/llm_finetune/qwen/qwen3_moe_30b_te_hybridep_mxfp8_gb200.yaml:27 (the config's "To run this recipe" line, verbatim).
automodel examples/llm_finetune/qwen/qwen3_moe_30b_te_hybridep_mxfp8_gb200.yaml --nproc-per-node 8
