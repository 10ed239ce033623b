"""How busy the GPU is during the trial's timed steps (issue 26: a speed-up you can trust).

NVML's utilization rate is the share of its last sample period (1/6 s to 1 s) in which a kernel
ran. A training step the GPU limits keeps it ~100% busy; a step the host limits (eager FP8
modules issue thousands of small kernels a step, and at small shapes the GPU finishes them faster
than Python issues them) leaves it idle between launches. Such a step, and the speed-up measured
with it, follows the host's speed and load: on two H200 hosts of 2026-11-27 the same 1B TE eager
FP8 step ran a steady 157 ms on one (GPU busy 96-100% in every step) and alternated between 157 and
180-190 ms on the other at an unchanged SM clock (docs/gpu-results.md).

Runs inside the trial child only (torch is imported there). Never raises: without NVML, or when
the torch device cannot be matched to an NVML device by its UUID, it samples nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

HOST_BOUND_BUSY = 90
"""Busy % below which a timed step counts as one the host limited."""
HOST_BOUND_STEPS = 2
"""How many such FP8 steps (at one depth) make the trial say so: the host limits a step at
times, not always. On an H100 the trial's FP8 steps at 16 layers had 3 of 12 under 90% (the
others 95-100%, median 100%) and the real runs' FP8 steps then alternated 177 ms / 198-268 ms
(busy 37-90% in the slow ones); on an H200 host where the real FP8 steps ran a steady 157 ms,
none of 45 was under 90% (docs/gpu-results.md, 2026-11-27 fifth session).

Every depth the trial timed counts, not only the deepest: on an H100 of 2026-11-28 the trial's
FP8 steps at 8 layers were 75-95% busy (8 of 12 under 90%) and those at 16 layers 90-100%, and its
16-layer FP8 step came out 8% slower than the real runs', whose first run spent its first steps
69-81% busy (docs/gpu-results.md, 2026-11-28)."""


@dataclass(frozen=True)
class HostBound:
    """The timed steps of one depth that show the host limiting them."""

    depth: int
    low: int        # steps under HOST_BOUND_BUSY
    sampled: int
    median: int


class Busy:
    """Samples the utilization rate of the GPU that ``device`` is, once per call to ``sample``."""

    def __init__(self, torch: Any, device: str) -> None:
        self.samples: list[int] = []
        self._nv, self._handle = nvml_handle(torch, device)

    @staticmethod
    def _match(torch: Any, nv: Any, device: str) -> Any:
        """The NVML handle of ``device``: by UUID (CUDA and NVML number GPUs differently under
        CUDA_VISIBLE_DEVICES; ``torch`` None: not looked up); by index only where no device list
        renumbers them."""
        props = torch.cuda.get_device_properties(device) if torch is not None else None
        uuid = str(getattr(props, "uuid", "") or "")
        if uuid:
            name = uuid if uuid.startswith(("GPU-", "MIG-")) else f"GPU-{uuid}"
            try:
                return nv.nvmlDeviceGetHandleByUUID(name)
            except Exception:  # noqa: BLE001 - fall through to the index, where safe
                pass
        if os.environ.get("CUDA_VISIBLE_DEVICES") is None:
            index = (torch.device(device).index if torch is not None else
                     int(device.split(":")[1]) if ":" in device else 0)
            return nv.nvmlDeviceGetHandleByIndex(index or 0)
        return None

    def sample(self) -> None:
        if self._handle is None:
            return
        try:
            value = self._nv.nvmlDeviceGetUtilizationRates(self._handle).gpu
        except Exception:  # noqa: BLE001 - stop sampling, keep what was read
            self._handle = None
            return
        if type(value) is int and 0 <= value <= 100:
            self.samples.append(value)
        else:       # a percentage NVML cannot give (-5, 2**32-1, text): stop (redteam7)
            self._handle = None


def deepest_busy(runs: list[dict[str, Any]], precision: str) -> list[int]:
    """The busy % of ``precision``'s timed steps at the deepest depth sampled, in order."""
    mine = [r for r in runs if r.get("precision") == precision and r.get("busy_pct")]
    if not mine:
        return []
    deepest = max(mine, key=lambda r: int(r.get("depth") or 0))
    return [int(v) for v in deepest["busy_pct"] if isinstance(v, (int, float))]


def nvml_handle(torch: Any, device: str) -> tuple[Any, Any]:
    """(pynvml, the NVML handle of ``device``: :meth:`Busy._match`), or (None, None) without
    NVML or where the device cannot be matched. Never raises."""
    try:
        from preflight.probes.nvml_child import load

        nv = load()
        if isinstance(nv, dict):   # no NVML library or no pynvml
            return None, None
        nv.nvmlInit()
        handle = Busy._match(torch, nv, device)
        return (nv, handle) if handle is not None else (None, None)
    except Exception:  # noqa: BLE001 - a diagnostic never fails the trial
        return None, None


def median_busy(runs: list[dict[str, Any]], precision: str) -> int | None:
    """The median busy % of ``precision``'s timed steps at the deepest depth sampled."""
    values = sorted(deepest_busy(runs, precision))
    return values[len(values) // 2] if values else None


def host_bound(runs: list[dict[str, Any]], precision: str) -> HostBound | None:
    """The deepest depth at which ``precision``'s timed steps show the host limiting them (their
    median busy % under HOST_BOUND_BUSY, or HOST_BOUND_STEPS or more steps under it); None when
    no depth does, or nothing was sampled."""
    found: list[HostBound] = []
    for r in runs:
        if r.get("precision") != precision or not r.get("busy_pct"):
            continue
        values = sorted(int(v) for v in r["busy_pct"] if isinstance(v, (int, float)))
        if not values:
            continue
        low, median = sum(v < HOST_BOUND_BUSY for v in values), values[len(values) // 2]
        if median < HOST_BOUND_BUSY or low >= HOST_BOUND_STEPS:
            found.append(HostBound(int(r.get("depth") or 0), low, len(values), median))
    return max(found, key=lambda h: h.depth) if found else None
