#!/bin/bash
# RECONSTRUCTION from meta-pytorch/torchtune PR 2546 (merged 2025-04-17 as 1075d9cd): "To use this feature, add the following
# to your config.yaml: enable_fp8_training: true / fp8_recipe_name: tensorwise"; its experiments ran "on 4x H100 ... on the
# cleaned alpaca dataset for 1 epoch, using a batch size of 16 with torch.compile". Written here as tune's key=value overrides
# on the stock Llama 3.1 8B full-finetune config (copied at the merge commit).
tune run --nproc_per_node 4 full_finetune_distributed --config recipes/configs/llama3_1/8B_full.yaml \
  enable_fp8_training=true fp8_recipe_name=tensorwise compile=True batch_size=16 \
  dataset._component_=torchtune.datasets.alpaca_cleaned_dataset
