#!/bin/bash
# RECONSTRUCTION (NVIDIA/TransformerEngine issue 2956): single-GPU run of the probe.
python probe.py
