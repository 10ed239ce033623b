#!/bin/bash
# fp8-doctor holdout15 (eval16): RECONSTRUCTION of the launch in hpcaitech/ColossalAI issue 6390
# (https://github.com/hpcaitech/ColossalAI/issues/6390): the issue quotes a script, not its command; ColossalAI's
# documented launcher for its examples (examples/language/llama/README.md at 4f9953be335ef371b3848719ddafe596c01ecd37:
# `colossalai run --nproc_per_node N script.py`). Two GPUs assumed.
colossalai run --nproc_per_node 2 train_fp8.py
