#!/bin/bash
# RECONSTRUCTION: a LoRA fine-tune of Llama 3.1 8B with torchtune's FP8 switch, as users asked in
# meta-pytorch/torchtune issue 2600 ('How to try with FP8 for LLM finetuning?'); config and recipe
# names as shipped at bd2a0fc7.
tune run --nproc_per_node 8 lora_finetune_distributed --config recipes/configs/llama3_1/8B_lora.yaml \
    enable_fp8_training=True compile=True
