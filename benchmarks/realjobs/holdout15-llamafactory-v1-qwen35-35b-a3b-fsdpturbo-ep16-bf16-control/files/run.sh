#!/bin/bash
# fp8-doctor holdout15 (eval16): hiyouga/LlamaFactory @ ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30. The v1 launch form of
# docs/zh/getting-started.md:97-98 (`export USE_V1=1`, `llamafactory-cli sft <v1 yaml>`) applied to this v1 example; the
# EP 16 of the example needs 16 ranks (two nodes of 8, torchrun environment of the cluster assumed).
export USE_V1=1
llamafactory-cli sft examples/v1/train_full/train_full_qwen3_moe_fsdpturbo_ep_fsdp.yaml
