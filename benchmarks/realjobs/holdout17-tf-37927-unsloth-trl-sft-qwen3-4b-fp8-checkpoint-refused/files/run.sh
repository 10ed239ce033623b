#!/bin/bash
# RECONSTRUCTION: a single-GPU run of train.py (the issue runs it from a notebook-style script; no launcher is named).
python train.py
