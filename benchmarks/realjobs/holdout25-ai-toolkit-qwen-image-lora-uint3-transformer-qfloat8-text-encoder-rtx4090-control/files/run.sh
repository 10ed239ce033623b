#!/bin/bash
# fp8-doctor holdout25 (eval26): ostris/ai-toolkit README: "Run the file like so python run.py config/whatever_you_want.yml".
python run.py config/examples/train_lora_qwen_image_24gb.yaml
