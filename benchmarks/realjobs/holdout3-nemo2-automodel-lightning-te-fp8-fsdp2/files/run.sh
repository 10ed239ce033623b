#!/bin/bash
# RECONSTRUCTION: the torchrun command in the header of NVIDIA/NeMo examples/llm/finetune/automodel.py,
# with its --fp8 flag ("Enables fp8 training") added.
torchrun --nproc-per-node=8 \
  examples/llm/finetune/automodel.py \
  --strategy fsdp2 \
  --devices 8 \
  --model meta-llama/Llama-3.2-1B \
  --ckpt-folder "output" \
  --fp8
