#!/bin/bash
# fp8-doctor holdout12 (eval13): KellerJordan/modded-nanogpt @ f411b3d346aa52d3504324ca93c230fd84c6c07f, run.sh with the
# environment switch train_gpt.py reads to turn its FP8 off: `use_fp8 = not os.environ.get("DISABLE_FP8", False)` (l.1224
# of the original, the lm_head) and `use_mlp_fp8 = self.training and not os.environ.get("DISABLE_FP8", False)` (l.1498,
# the MLP). RECONSTRUCTION: the switch exists for ablations; the speedrun records run with FP8.
DISABLE_FP8=1 torchrun --standalone --nproc_per_node=8 train_gpt.py
