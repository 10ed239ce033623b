#!/bin/bash
# RECONSTRUCTION after hpcaitech/ColossalAI (https://github.com/hpcaitech/ColossalAI/issues/6387)
# fp8-doctor holdout25 (eval26): launch as in the reporter's sibling issue 6390 (colossalai run -> torchrun).
colossalai run --nproc_per_node 4 main.py
