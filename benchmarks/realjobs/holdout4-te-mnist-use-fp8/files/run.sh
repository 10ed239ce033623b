#!/bin/bash
# RECONSTRUCTION: the launch line for NVIDIA/TransformerEngine@d0067d0da6cb as its docs give it (see job.yaml source.outcome).
# examples/pytorch/mnist: FP8 training run
python examples/pytorch/mnist/main.py --use-fp8
