"""The smoke step's children side by side, started early (issue 26, item 1).

Most of a smoke step is importing: torch in every child, and for Transformer Engine torch's
compiler stack and TE on top (6-10 s of a 13-17 s check on the GPU image, docs/gpu-results.md).
So each part of the step gets its own child, all started at once (``base``: the raw
``_scaled_mm`` checks and the speed stage; ``torchao``; ``te``), and a check starts them before its
static part (:func:`prestart`): they import while the probes and config readers run, then wait
for their request, which says what the job's facts asked for.

Sharing the GPU: each child makes its own CUDA context and runs small checks (a few 1024-wide
layers). The speed stage's timings must not overlap other work, so the children share a lock file
(``flock``: the checks take it shared, the speed stage exclusive; child.py). A GPU in exclusive
compute mode refuses a second context ("busy or unavailable"): a part that failed so is run
again alone, after the others. Where ``fcntl`` does not exist, or the children are a test's own
command, the old single child runs every stage in turn.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.smoke import cache as bytecode
from preflight.smoke.runner import ChildRun, Progress, _Live, abandon, collect_all, send, spawn

MODULES = {"base": ("torch",), "torchao": ("torch", "torchao"),
           "te": ("torch", "transformer_engine")}
BUSY = ("busy or unavailable", "cudaErrorDevicesUnavailable")
BACKEND_KEYS = ("scaled_mm", "torchao", "te", "speed")


def supported() -> bool:
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return False
    return True


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def parts_for(backends: Sequence[str], only: Sequence[str] | None, device: str,
              speed: bool) -> list[str]:
    """The parts a request needs, as child.py would run its stages in one child."""
    named = set(backends) - {"auto"}
    auto = "auto" in backends
    out = ["base"] if auto or "scaled_mm" in named or (speed and device.startswith("cuda")) \
        else []
    for part, module in (("torchao", "torchao"), ("te", "transformer_engine")):
        if part == "te" and not device.startswith("cuda") and part not in named:
            continue   # TE has no CPU path: under auto it is not applicable there
        if part in named or (auto and (only is None or part in only) and installed(module)):
            out.append(part)
    return out


@dataclass
class Early:
    """Children started before the facts were known, waiting for their request."""

    lives: dict[str, _Live | ChildRun]
    timeout: float
    cache: bytecode.Cache
    used: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def cancel(self) -> None:
        """End the children no request went to (idempotent)."""
        if self.used:
            return
        self.used = True
        for live in self.lives.values():
            abandon(live)


def resolve_cache(opts: Any, parts: Sequence[str]) -> bytecode.Cache:
    modules = sorted({m for p in parts for m in MODULES[p]})
    return bytecode.resolve(modules, enabled=getattr(opts, "cache", True),
                            folder=getattr(opts, "cache_dir", None))


def prestart(opts: Any, parts: Sequence[str]) -> Early | None:
    """Start the children of ``parts`` now, each importing and then waiting (see module doc)."""
    if opts.command is not None or not supported() or not parts:
        return None
    cache = resolve_cache(opts, parts)
    lives = {p: spawn(None, opts.timeout, env=opts.env, part=p, pycache=cache.prefix)
             for p in parts}
    return Early(lives, opts.timeout, cache)


def run_parts(base: dict[str, Any], parts: Sequence[str], opts: Any, progress: Progress,
              early: Early | None = None) -> tuple[ChildRun, dict[str, Any]]:
    """Run the parts side by side (reusing ``early`` children); one merged run + details."""
    lockdir = tempfile.mkdtemp(prefix="fp8-doctor-gpulock-")
    lock = os.path.join(lockdir, "gpu.lock")
    try:
        with open(lock, "w", encoding="utf-8"):
            pass
        request = {**base, "gpu_lock": lock}
        pre = early.lives if early is not None and not early.used else {}
        if early is not None:
            early.used = True
            for name, live in pre.items():
                if name not in parts:
                    abandon(live)
        cache = early.cache if early is not None else resolve_cache(opts, parts)
        lives = [send(pre[p], request) if p in pre else
                 spawn(request, opts.timeout, env=opts.env, part=p, pycache=cache.prefix)
                 for p in parts]
        progress(f"smoke: {len(lives)} child process(es) side by side ({', '.join(parts)})"
                 f"{', started early' if pre else ''}, timeout {opts.timeout:g} s")
        runs = collect_all(lives, opts.timeout, progress)
        again = [i for i, r in enumerate(runs) if r.status != "ok" and _busy(r)]
        for i in again:   # exclusive compute mode: the GPU took one context at a time
            progress(f"smoke: the GPU refused a second process; running {parts[i]} alone")
            runs[i] = collect_all([spawn(request, opts.timeout, env=opts.env, part=parts[i],
                                         pycache=cache.prefix)], opts.timeout, progress)[0]
    finally:
        for name in (lock, lockdir):
            try:
                (os.rmdir if name == lockdir else os.unlink)(name)
            except OSError:
                pass
    details = {"children": {p: r.seconds for p, r in zip(parts, runs)},
               "bytecode_cache": cache.as_details(), "started_early": bool(pre)}
    if again:
        details["run_alone"] = [parts[i] for i in again]
    return merge(runs, parts), details


def _busy(run: ChildRun) -> bool:
    text = f"{run.error or ''} {run.stderr_tail[-2000:]}"
    return any(marker in text for marker in BUSY)


def merge(runs: Sequence[ChildRun], parts: Sequence[str]) -> ChildRun:
    """One run as if one child had run every part: the first child's setup facts, each part's
    results, the first failure's status, stage, error and output, the longest duration."""
    first = runs[0]
    doc: dict[str, Any] = dict(first.doc)
    for run in runs[1:]:
        for key, value in run.doc.items():
            if key in BACKEND_KEYS or key in ("torchao_import_s", "te_import_s") or key not in doc:
                doc[key] = value
    bad = next((r for r in runs if r.status != "ok"), None)
    doc["done"] = all(r.doc.get("done") for r in runs)
    if bad is not None:
        doc["stage"] = bad.doc.get("stage", "start")
        if bad.doc.get("fatal"):
            doc["fatal"] = bad.doc["fatal"]
    part = parts[runs.index(bad)] if bad is not None and len(runs) > 1 else None
    error = None if bad is None else (f"{part} child: {bad.error}" if part else bad.error)
    return ChildRun(doc, bad.status if bad else "ok", error,
                    bad.returncode if bad else first.returncode,
                    max(r.seconds for r in runs), (bad or first).stderr_tail, first.device)


