#!/bin/bash
# fp8-doctor holdout13 (eval14): KellerJordan/modded-nanogpt @ f411b3d346aa52d3504324ca93c230fd84c6c07f. The repo's run.sh form (`torchrun --standalone
# --nproc_per_node=8 train_gpt.py`) for the GPT-2 Medium track script. train_gpt_medium.py registers the FP8
# _scaled_mm op and passes use_fp8 = not os.environ.get("DISABLE_FP8", False) to the lm_head, but CastedLinear.__init__
# sets `self.use_fp8 = False  # turn off fp8 for now` whatever it is given (README track 2 record 7: "Remove FP8 head").
torchrun --standalone --nproc_per_node=8 train_gpt_medium.py
