#!/bin/bash
# Source: NVIDIA/TransformerEngine issue 3062 (the repro is run as a script).
python nvfp4_train.py
