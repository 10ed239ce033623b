"""The trial child's result document, checked before the parent computes with it (issue 21).

The child is fp8-doctor's own code, but it runs on the user's torch, TE and driver, and its
document crosses a process boundary as JSON: a step time of NaN, 0 or -1, a busy % of NaN, a depth
of "x" or a precision trained at depths the other was not must never become a verdict ("FP8
should pay: about nanx" was one, redteam8) nor a traceback. :func:`problem` says what is wrong,
or None; the trial then reports "not usable" with that reason.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

PRECISIONS = ("bf16", "fp8")
MAX_SECONDS = 86_400.0
"""The longest step time taken as measured (a day): 1e308 s is finite, and a twin time of it was
reported as "the host needs inf ms ... inf% of the step" (redteam10)."""
MAX_BYTES = 1 << 60
"""The largest peak memory taken as a byte count (10**400 was an OverflowError in trial.py)."""


def seconds(value: Any) -> TypeGuard[float]:
    """A positive, finite number of seconds up to :data:`MAX_SECONDS` (not a bool, a string or
    NaN)."""
    return type(value) in (int, float) and math.isfinite(value) and 0 < value <= MAX_SECONDS


def depths(value: Any) -> tuple[int, ...] | None:
    """``value`` as the depths a trial trained (positive whole numbers), or None."""
    if not isinstance(value, list) or not value or \
            any(type(d) is not int or d < 1 for d in value):
        return None
    return tuple(value)


def _run_problem(n: int, run: Any) -> str | None:
    if not isinstance(run, dict):
        return f"run {n} is not a document"
    precision, depth = run.get("precision"), run.get("depth")
    if precision not in PRECISIONS:
        return f"run {n} names no known precision ({str(precision)[:20]!r})"
    if type(depth) is not int or depth < 1:
        return f"run {n} has no positive whole depth ({str(depth)[:20]!r})"
    if not seconds(run.get("median_s")):
        return f"{precision} at depth {depth} has no positive finite step time"
    busy = run.get("busy_pct", [])
    if not isinstance(busy, list) or any(type(v) is not int or not 0 <= v <= 100 for v in busy):
        return f"{precision} at depth {depth} has GPU-busy readings outside 0-100"
    if "twin_s" in run and not seconds(run["twin_s"]):
        return f"{precision} at depth {depth} has a host-twin time that is not a positive number"
    peak = run.get("peak_bytes")
    if peak is not None and (type(peak) is not int or not 0 <= peak <= MAX_BYTES):
        return f"{precision} at depth {depth} has a peak memory that is not a byte count"
    return None


def problem(result: dict[str, Any]) -> str | None:
    """Why ``result`` (status ok) cannot be computed with, or None."""
    runs = result.get("runs")
    if not isinstance(runs, list) or not runs:
        return "it holds no timed runs"
    if depths(result.get("depths")) is None:
        return "its depths are not positive whole numbers"
    for n, run in enumerate(runs):
        why = _run_problem(n, run)
        if why:
            return why
    trained = {p: sorted(r["depth"] for r in runs if r["precision"] == p) for p in PRECISIONS}
    if trained["bf16"] != trained["fp8"] or not trained["fp8"]:
        return (f"BF16 and FP8 were not timed at the same depths (BF16 {trained['bf16']}, "
                f"FP8 {trained['fp8']})")
    if len(set(trained["fp8"])) != len(trained["fp8"]):
        return "a depth was timed twice"
    return None
