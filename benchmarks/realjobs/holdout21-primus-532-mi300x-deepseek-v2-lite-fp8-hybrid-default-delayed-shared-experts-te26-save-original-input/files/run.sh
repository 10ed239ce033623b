#!/bin/bash
# Source: AMD-AGI/Primus @ df81300e9938a7184793f87efb3d45744660166d README.md quick start ("primus-cli container --image rocm/primus:v25.10 -- train
# pretrain --config ..."), with the MI300X DeepSeek-V2-Lite FP8 config of the same commit in place of the README's
# BF16 Llama-2 example (the HF token line of the README is left out).
./primus-cli container --image rocm/primus:v25.10 \
  -- train pretrain --config examples/megatron/configs/MI300X/deepseek_v2_lite-FP8-pretrain.yaml
