#!/bin/bash
# fp8-doctor holdout14 (eval15): RECONSTRUCTION of a launch of radixark/miles @ 31f1ca961a94cb860cec3b2dea34ec332bfa8f76, scripts/run_deepseek_v32.py: the typer `train` command
# (run_deepseek_v32.py:287-291) with ScriptArgs switches the script defines (hardware Literal incl. "H100" :33,
# rollout_mxfp8 :42, train_mxfp8 :44): a user on an H100 cluster asking for MXFP8 rollout and training.
python scripts/run_deepseek_v32.py train --hardware H100 --rollout-mxfp8 --train-mxfp8
