#!/bin/bash
# fp8-doctor holdout12 (eval13): allenai/OLMo-core @ fa6c5014c9f6e9ee789da2d9c20d5126fee8df0d,
# src/scripts/train/OLMo3/OLMo3-7B-long-context.py, launched with the internal experiment CLI as its __main__
# docstring shows (l.126-129 of the original: `python ... launch my_run ai2/augusta --launch.num_nodes=8
# --launch.priority=high`). FP8 comes from cookbook.configure_train_module(..., float8_enabled=True, ...)
# (l.54-63), which builds Float8Config(enabled=float8_enabled, ao=AOFloat8LinearConfig.recommended())
# (olmo_core/internal/cookbook.py l.89); beaker image petew/olmo-core-tch270cu128 (l.40).
python src/scripts/train/OLMo3/OLMo3-7B-long-context.py launch olmo3-7b-lc ai2/augusta \
    --launch.num_nodes=8 \
    --launch.priority=high
