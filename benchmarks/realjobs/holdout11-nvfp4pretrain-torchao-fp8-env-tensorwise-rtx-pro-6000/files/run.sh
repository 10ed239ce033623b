#!/bin/bash
# fp8-doctor holdout11 (eval12): Infatoshi/nvfp4-pretrain @ 3e7bad69696a7a09a1fe0eb6c1e51cbaea1108cd.
# The FP8 run the repository's launcher starts for `precision: fp8` (train.py l.34-36: FP8=1,
# FP8_RECIPE=<fp8.recipe>; l.43-45: MUON=1, MUON_LR; l.55-66: the trainer's flags from config.yaml's
# model/train sections, run from scaling/), written out as the command it executes.
# scaling/train_text.py reads the switches from the environment (l.200-208: FP8=1 -> torchao
# convert_to_float8_training with Float8LinearConfig(), tensorwise) and --compile 1 compiles the model.
cd scaling
FP8=1 FP8_RECIPE=tensorwise MUON=1 MUON_LR=0.01 CUDA_HOME=/usr/local/cuda-13 \
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
  python3 -u train_text.py --dim 2048 --nl 12 --nh 16 --nkv 8 --T 512 --bs 32 \
    --steps 200000 --warmup 300 --grad_accum 1 --lr 6e-4 --compile 1 \
    --data /home/infatoshi/data/owt --logevery 100 --tag run \
    --traj runs/traj.jsonl --out runs/result.jsonl
