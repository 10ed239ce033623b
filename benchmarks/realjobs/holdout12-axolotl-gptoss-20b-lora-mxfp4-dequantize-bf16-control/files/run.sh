#!/bin/bash
# fp8-doctor holdout12 (eval13): axolotl-ai-cloud/axolotl @ 067b021c8b87a9e5e380b9173c704cf7340e30f5,
# examples/gpt-oss/README.md l.23-24: "LoRA SFT linear layers (1x48GB @ ~44GiB)".
axolotl train examples/gpt-oss/gpt-oss-20b-sft-lora-singlegpu.yaml
