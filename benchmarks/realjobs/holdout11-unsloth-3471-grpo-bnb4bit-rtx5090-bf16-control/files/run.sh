#!/bin/bash
# fp8-doctor holdout11 (eval12): unslothai/unsloth issue 3471 - local, 1 x RTX 5090.
python train.py
