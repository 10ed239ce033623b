"""``runtime.fp8.te_*`` and ``runtime.optimizer.steps``: was the FP8 scaling state restored?

After ``load_state_dict`` / a resume, Transformer Engine DelayedScaling modules must carry the
scales and amax history they had when the checkpoint was saved (``fp8_meta["scaling_fwd"|
"scaling_bwd"]``). When ``_extra_state`` was dropped (``strict=False`` to get past the pickle
refusal of TE 2.16.1, 2.17.1 and >= 2.18, or a TE 1.x checkpoint TE 2.0-2.3 could not read, TE
issue 1623) the scales restart at 1.0 with an empty history while the optimizer has already
taken steps: the loss spike after a resume (TE issues 982, 759). From TE 1.7 a module that did
not run in a step keeps its history unrolled (its amax is 0: delayed_scaling.cu, PR 825), so a
module that skips steps (an MoE expert no token chose, a branch) has fewer rows than the steps
taken; only a restart empties every history, so the fullest one decides. Read here without importing
torch or TE (the objects are live; TE's module path and ``fp8_meta`` shape are duck-typed). The
rules are rules/checkpoint/live/FP8D-CKPT-0008, -0009 and -0010.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from preflight.facts import Unknown

MAX_NAMES = 16


def _floats(t: Any) -> list[float] | None:
    try:
        return [float(v) for v in t.detach().float().flatten().cpu().tolist()]
    except Exception:  # noqa: BLE001 - an odd tensor is "cannot tell", never a crash
        return None


def _filled_rows(hist: Any) -> int | None:
    """Rows of an amax history ([len, n]) holding any non-zero value."""
    try:
        rows = hist.detach().float().abs().sum(dim=-1) if hist.dim() > 1 else hist.detach().abs()
        return int((rows != 0).sum().item())
    except Exception:  # noqa: BLE001
        return None


def te_state(named_modules: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Scaling state of every TE module: which hold DelayedScaling state, which are initial."""
    stateful, stateless, initial = 0, 0, []
    rows_min: int | None = None
    rows_max: int | None = None
    hist_len: int | None = None
    unreadable = []
    for name, mod in named_modules:
        if not type(mod).__module__.startswith("transformer_engine.pytorch"):
            continue
        meta = getattr(mod, "fp8_meta", None)
        if not isinstance(meta, dict) or not hasattr(meta.get("scaling_fwd"), "scale"):
            if isinstance(meta, dict):
                stateless += 1
            continue
        scales, hists = [], []
        for which in ("scaling_fwd", "scaling_bwd"):
            st = meta.get(which)
            if st is None:
                continue
            scales.append(_floats(getattr(st, "scale", None)))
            hists.append(getattr(st, "amax_history", None))
        values = [h for h in hists if h is not None]
        flat = [_floats(h) for h in values]
        if any(v is None for v in scales + flat):
            unreadable.append(name)
            continue
        stateful += 1
        unit = all(x == 1.0 for s in scales for x in s or [])
        if unit and all(x == 0.0 for f in flat for x in f or []):
            initial.append(name or "<model>")
        fwd = getattr(meta["scaling_fwd"], "amax_history", None)
        if fwd is not None:
            rows = _filled_rows(fwd)
            if rows is not None:
                rows_min = rows if rows_min is None else min(rows_min, rows)
                rows_max = rows if rows_max is None else max(rows_max, rows)
            try:
                hist_len = int(fwd.shape[0])
            except Exception:  # noqa: BLE001
                pass
    out: dict[str, Any] = {"runtime.fp8.te_state_modules": stateful,
                           "runtime.fp8.te_stateless_modules": stateless,
                           "runtime.fp8.te_state_initial": initial[:MAX_NAMES],
                           "runtime.fp8.te_state_initial_count": len(initial)}
    if unreadable:
        out["runtime.fp8.te_state_unreadable"] = unreadable[:MAX_NAMES]
    if rows_min is not None:
        out["runtime.fp8.te_history_rows_min"] = rows_min
    if rows_max is not None:
        out["runtime.fp8.te_history_rows_max"] = rows_max
    if hist_len is not None:
        out["runtime.fp8.te_history_len"] = hist_len
    return out


def optimizer_steps(optimizer: Any) -> int | Unknown:
    """The largest ``step`` in the optimizer state (Adam-style); Unknown where there is none."""
    best: int | None = None
    try:
        for st in getattr(optimizer, "state", {}).values():
            step = st.get("step") if isinstance(st, dict) else None
            if step is None:
                continue
            value = int(float(step.item() if hasattr(step, "item") else step))
            best = value if best is None else max(best, value)
    except Exception as exc:  # noqa: BLE001
        return Unknown(f"optimizer state unreadable: {type(exc).__name__}")
    if best is None:
        return Unknown("the optimizer state holds no step count (no step taken yet, or not "
                       "Adam-style)")
    return best


def resume_facts(model: Any, optimizer: Any = None) -> dict[str, Any]:
    """All facts of this module; ``te_history_short``: even the fullest history holds fewer filled
    rows than the optimizer steps taken (capped at its length - 1), so it restarted after some
    steps (a module that skipped steps has fewer rows without any restart, TE >= 1.7)."""
    try:
        out = te_state(model.named_modules())
    except Exception as exc:  # noqa: BLE001
        return {"runtime.fp8.te_state_modules": Unknown(f"model unreadable: {type(exc).__name__}")}
    if optimizer is not None:
        steps = optimizer_steps(optimizer)
        out["runtime.optimizer.steps"] = steps
        rows = out.get("runtime.fp8.te_history_rows_max")
        length = out.get("runtime.fp8.te_history_len")
        if isinstance(steps, int) and rows is not None and length:
            # A full history shows len - 1 filled rows: TE zeroes the row of the step to come
            # after the roll (TE 2.20.2 on an H100: 3 of 4 after 6 steps, 2 after 2).
            out["runtime.fp8.te_history_short"] = rows < min(steps, length - 1)
    return out
