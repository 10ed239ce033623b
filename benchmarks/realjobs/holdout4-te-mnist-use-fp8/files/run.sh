#!/bin/bash
# examples/pytorch/mnist: FP8 training run
python examples/pytorch/mnist/main.py --use-fp8
