#!/bin/bash
# axolotl-ai-cloud/axolotl issue 3154: BF16 FSDP1 SFT, 8 GPUs; launch reconstructed.
axolotl train fsdp1.yaml --num-processes 8
