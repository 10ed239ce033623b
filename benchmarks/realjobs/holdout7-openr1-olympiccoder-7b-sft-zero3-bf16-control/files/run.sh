#!/bin/bash
# RECONSTRUCTION of the open-r1 (huggingface/open-r1) SFT launch for this recipe ("1 node of 8 H100s with
# DeepSpeed ZeRO-3", the recipe's first line): the repository's recipes/accelerate_configs/zero3.yaml is
# named but is not part of this job.
accelerate launch --config_file=recipes/accelerate_configs/zero3.yaml src/open_r1/sft.py \
    --config recipes/OlympicCoder-7B/sft/config_v00.00.yaml
