#!/bin/bash
# RECONSTRUCTION: the first launch example in the docstring of NVIDIA-NeMo/Megatron-Bridge
# examples/quantization/pretrain_quantized_llama3_8b.py (commit in job.yaml), with the
# "<path to the quantized checkpoint>" placeholder replaced by a path (a bare < is a shell redirection).
torchrun --nproc_per_node=8 examples/quantization/pretrain_quantized_llama3_8b.py \
    --hf-path meta-llama/Meta-Llama-3-8B \
    model.tensor_model_parallel_size=4 \
    model.gradient_accumulation_fusion=False \
    checkpoint.pretrained_checkpoint=/ckpts/llama3_8b_fp8_quantized
