#!/bin/bash
# fp8-doctor holdout25 (eval26): tdrussell/diffusion-pipe README launch line, with the Qwen-Image 24GB example config.
NCCL_P2P_DISABLE="1" NCCL_IB_DISABLE="1" deepspeed --num_gpus=1 train.py --deepspeed --config examples/qwen_image_24gb_vram.toml
