#!/bin/bash
# RECONSTRUCTION: torchtune's Llama 4 Scout full fine-tune (tensor_parallel_dim 2, Llama 4's
# decoder_only_tp_plan) with FP8 switched on, the combination meta-pytorch/torchtune issue 2629
# ('Support tensor parallelism with FP8 training') tracks.
tune run --nproc_per_node 8 full_finetune_distributed --config recipes/configs/llama4/scout_17B_16E_full.yaml \
    enable_fp8_training=True compile=True
