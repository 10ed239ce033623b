#!/bin/bash
# fp8-doctor holdout15 (eval16): pytorch/torchtitan @ b5bcd76c66d0acb1a08b176d9639425bc55e0b2a: the launch of the
# config-registry function moonlight_16b_a3b (torchtitan/models/kimi_k2_7/config_registry.py:128) the way run_train.sh
# takes a module and a config (run_train.sh:31-32 MODULE / CONFIG, its usage comment at lines 10-12). Reconstructed
# command; no flag beyond the module and config.
NGPU=8 MODULE=kimi_k2_7 CONFIG=moonlight_16b_a3b ./run_train.sh
