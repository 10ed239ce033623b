#!/bin/bash
# RECONSTRUCTION of the launch in fla-org/flash-linear-attention issue 591: LLaDA base model
# trained with the transformers Trainer from the d1 code base (github.com/dllm-reasoning/d1),
# launched by accelerate with the config above. The d1 training script is not part of the job.
accelerate launch --config_file accelerate_fp8.yaml sft_train.py
