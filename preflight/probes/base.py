"""The probe interface: a probe collects facts and never raises, never prints, never judges.

A probe is a zero-argument callable returning a :class:`ProbeResult`. :func:`guarded` runs one
and turns any exception into a ``crashed`` result with the reason, so one broken probe never
aborts the run (flutter doctor's rule: a crashed validator is a result). The facts the probe
would have produced are then ``Unknown(reason)``, never absent: an absent fact reads as "not
installed" / "not set" to the rules, which would turn a crash into false alarms or silent passes.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from preflight.facts import Unknown


class ProbeStatus(str, enum.Enum):
    """How a probe ended."""

    OK = "ok"
    SKIPPED = "skipped"   # did not apply here (e.g. no NVIDIA driver); facts may still say so
    CRASHED = "crashed"   # raised or timed out; ``reason`` says why


@dataclass(frozen=True)
class ProbeResult:
    """Facts from one probe, with provenance and how the probe ended."""

    name: str
    facts: Mapping[str, Any] = field(default_factory=dict)
    provenance: Mapping[str, str] = field(default_factory=dict)
    status: ProbeStatus = ProbeStatus.OK
    reason: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status.value, "reason": self.reason,
                "seconds": round(self.seconds, 4), "facts": len(self.facts)}


Probe = Callable[[], ProbeResult]


def guarded(name: str, probe: Probe,
            owns: Callable[[], Iterable[str]] = tuple) -> ProbeResult:
    """Run ``probe``; an exception becomes a CRASHED result naming the exception and where.

    ``owns`` returns the names of the facts the probe is responsible for (called only after a
    crash); each becomes ``Unknown`` with the crash as its reason, so rules that need them are
    undetermined rather than deciding on a missing fact.
    """
    start = time.perf_counter()
    try:
        result = probe()
    except Exception as exc:  # noqa: BLE001 - a crashed probe is a result, not an abort
        where = _where(exc)
        reason = f"{type(exc).__name__}: {exc}{where}"
        why = Unknown(f"the {name} probe crashed: {reason}")
        names = tuple(owns())
        return ProbeResult(name, {n: why for n in names}, {n: f"{name} (crashed)" for n in names},
                           status=ProbeStatus.CRASHED, reason=reason,
                           seconds=time.perf_counter() - start)
    if not result.seconds:
        result = ProbeResult(result.name, result.facts, result.provenance, result.status,
                             result.reason, time.perf_counter() - start)
    return result


def _where(exc: BaseException) -> str:
    """`` at file.py:LINE`` of the innermost frame of ``exc`` ("" without a traceback); walked by
    hand, as ``traceback`` costs ~3 ms of imports (tokenize, linecache) on every check."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return ""
    return f" at {tb.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno}"
