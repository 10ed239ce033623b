#!/bin/bash
# fp8-doctor holdout15 (eval16): RECONSTRUCTION. NVIDIA/NeMo @ 8cfedd7203462cb251a914e700e5605444277561: the launch form of
# scripts/performance/README.md:10 (`python -m scripts.performance.llm.<recipe> --account ... --partition ...`) for the
# Llama 3 8B fine-tuning recipe, with the README's options -g/--gpu h100, -c/--compute_dtype fp8, --fp8_recipe mxfp8
# ("block-level scaling -- 32 values") and -f/--finetuning lora (README.md:21-22, 29, 43).
python -m scripts.performance.llm.finetune_llama3_8b \
  --account my_account --partition batch \
  --gpu h100 -c fp8 --fp8_recipe mxfp8 -f lora -hf "$HF_TOKEN"
