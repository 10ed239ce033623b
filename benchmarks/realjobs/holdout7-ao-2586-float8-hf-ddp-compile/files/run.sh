#!/bin/bash
# pytorch/ao issue 2586 (2025-07-23): float8 training + HF transformer model + torch.compile + DDP.
torchrun --nproc_per_node 2 repro.py
