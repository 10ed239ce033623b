"""``env.*``: allow-listed environment variables only, never secrets (producer: probes/runtime.py).

The allow-list lives in probes/runtime.py; values whose name or content look secret are masked
even under an allow-listed prefix.
"""

from preflight.registry import FactSpec as F

SPECS = (
    F("env.<var>", "str", "Value of an allow-listed environment variable (NVTE_*, ACCELERATE_*, NCCL_*, CUDA_VISIBLE_DEVICES, ...)"),
)
