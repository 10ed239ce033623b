"""Fixtures shared by the framework tests."""

from __future__ import annotations

import pytest

# The layout of slime's scripts/run-qwen3-4B.sh (THUDM/slime v0.3.1) with Megatron-LM issue
# 2582's flags (holdout8 meg-2582): Megatron's own flags in bash arrays expanded after a store_true
# flag (--colocate), next to slime's and SGLang's own.
SLIME_SCRIPT = """\
#!/bin/bash
PRECISION_ARGS=(
   --fp8-format e4m3
   --fp8-recipe mxfp8
   --fp8-param-gather
)
OPTIMIZER_ARGS=(
   --optimizer adam
   --use-distributed-optimizer
   --optimizer-cpu-offload
   --use-precision-aware-optimizer
)
ray job submit --address="http://127.0.0.1:8265" \\
   -- python3 train.py \\
   --actor-num-nodes 1 \\
   --actor-num-gpus-per-node 8 \\
   --rollout-batch-size 32 \\
   --sglang-mem-fraction-static 0.7 \\
   --colocate \\
   ${PRECISION_ARGS[@]} \\
   ${OPTIMIZER_ARGS[@]}
"""


@pytest.fixture
def slime_script() -> str:
    """A slime launch script (``ray job submit -- python3 train.py ...``) whose Megatron flags
    (FP8 mxfp8 with param gather, distributed optimizer with CPU offload) come from arrays."""
    return SLIME_SCRIPT
