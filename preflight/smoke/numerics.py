"""Error measures shared by every smoke check (no torch import at module level).

SQNR is ``20*log10(||ref|| / ||ref - out||)`` in dB, the ``compute_error`` that torchao's and
PyTorch's own FP8 tests use. The thresholds the child judges it against, with the measurements
each rests on, are stated once in :mod:`preflight.registry.smoke_verdict` (re-exported here).
"""

from __future__ import annotations

import math
from typing import Any

from preflight.registry.smoke_verdict import (  # noqa: F401 - re-exported for the child's checks
    BYPASS_SQNR_DB,
    CKPT_AGREE_SQNR_DB,
    FWD_SQNR_MIN_DB,
    GRAD_SQNR_MIN_DB,
    JOB_SPEEDUP_MIN,
    KERNEL_SQNR_MIN_DB,
    REF_SPEEDUP_MIN,
    Band,
)

# Small-magnitude gradients for the checkpoint drift detector: below E5M2's smallest subnormal
# (2**-16 ~ 1.5e-5) at unit scale, so a backward scale stuck at 1.0 flushes them to zero.
DRIFT_GRAD_SCALE = 1e-6


def sqnr_db(ref: Any, out: Any) -> float:
    """SQNR of ``out`` against ``ref`` in dB (inf when equal, nan when either is non-finite)."""
    import torch  # imported lazily: this module is also read by the parent process

    r = ref.detach().double()
    o = out.detach().double()
    if not (torch.isfinite(r).all() and torch.isfinite(o).all()):
        return math.nan
    noise = torch.linalg.vector_norm(r - o).item()
    signal = torch.linalg.vector_norm(r).item()
    if noise == 0.0:
        return math.inf
    if signal == 0.0:
        return -math.inf
    return 20.0 * math.log10(signal / noise)


def finite_or_none(value: float) -> float | None:
    """JSON has no inf/nan: keep finite numbers, map inf to a large sentinel, nan to None."""
    if math.isnan(value):
        return None
    if math.isinf(value):
        return 999.0 if value > 0 else -999.0
    return round(value, 2)


def engaged(sqnr: float) -> bool:
    """FP8 really ran: the error is at least as large as FP8 rounding implies."""
    return Band(hi=BYPASS_SQNR_DB).holds(sqnr)


def accurate(sqnr: float, floor: float = FWD_SQNR_MIN_DB) -> bool:
    """Within the FP8 band from below (not broken)."""
    return Band(lo=floor).holds(sqnr)
