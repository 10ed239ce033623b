#!/bin/bash
# RECONSTRUCTION: the full-SFT command of hiyouga/LlamaFactory examples/README.md (line 146 at the cited commit).
FORCE_TORCHRUN=1 llamafactory-cli train examples/train_full/qwen3_full_sft.yaml
