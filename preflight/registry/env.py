"""``env.*``: allow-listed environment variables only, never secrets (producer: probes/runtime.py).

The allow-list lives in probes/runtime.py; values whose name or content look secret are masked
even under an allow-listed prefix. A job reader may state a variable the job's own code sets in
its training process (LLaMA-Factory's ``fp8: true`` -> ``ACCELERATE_MIXED_PRECISION=fp8``,
frameworks/llamafactory_launch.py): that value is what the training sees, so it replaces this
shell's (config facts are merged after the probes).
"""

from preflight.registry import FactSpec as F

SPECS = (
    F("env.<var>", "str", "Value of an allow-listed environment variable (NVTE_*, ACCELERATE_*, NCCL_*, CUDA_VISIBLE_DEVICES, ...)"),
)
