#!/bin/bash
# fp8-doctor holdout17 (eval18): launch of hiyouga/LlamaFactory's v1 trainer as its docs give it (docs/zh/getting-started.md
# @ ff6d4d12eeb0: `export USE_V1=1; llamafactory-cli sft <yaml>`), pointed at the v1 DeepSpeed example. Reconstructed line.
export USE_V1=1
llamafactory-cli sft examples/v1/train_full/train_full_deepspeed.yaml
