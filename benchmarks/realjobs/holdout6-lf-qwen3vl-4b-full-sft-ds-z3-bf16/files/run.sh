#!/bin/bash
# RECONSTRUCTION: the launch the LLaMA-Factory README gives for its examples.
llamafactory-cli train examples/train_full/qwen3vl_full_sft.yaml
