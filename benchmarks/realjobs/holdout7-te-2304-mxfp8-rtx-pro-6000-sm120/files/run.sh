#!/bin/bash
# NVIDIA/TransformerEngine issue 2304 (2025-10-26): src/llm_train.py in the latest NGC PyTorch image on an
# RTX PRO 6000 Blackwell (SM120). Launch reconstructed.
python src/llm_train.py
