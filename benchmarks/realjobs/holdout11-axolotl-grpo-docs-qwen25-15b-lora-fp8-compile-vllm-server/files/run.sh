#!/bin/bash
# fp8-doctor holdout11 (eval12): axolotl-ai-cloud/axolotl @ e4032fc90f462fd9c2eefd2433c2f4fd0845641f, run.sh (verbatim below this line)
# fp8-doctor holdout11 (eval12): docs/grpo.qmd "3. Start vLLM and train" (l.169-176) - vLLM server on
# GPU 0 (serves the BF16 base + LoRA), trainer on GPU 1.
CUDA_VISIBLE_DEVICES=0 axolotl vllm-serve config.yaml &
CUDA_VISIBLE_DEVICES=1 axolotl train config.yaml
