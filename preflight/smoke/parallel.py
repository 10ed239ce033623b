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

Order: the children start slowest first (:data:`START_ORDER`: TE, torchao, then the base part,
which imports torch only), so on a machine with few cores the critical path gets the first CPU;
results are merged in the parts' own order. While the bytecode cache is cold, one more child
fills it (smoke/cache.py); it is ended with the step if it has not finished.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.smoke import cache as bytecode
from preflight.smoke.runner import (
    ChildRun,
    Progress,
    _finish,
    _Live,
    abandon,
    collect_all,
    send,
    spawn,
)

MODULES = {"base": ("torch",), "torchao": ("torch", "torchao"),
           "te": ("torch", "transformer_engine")}
IMPORTS = {"base": ("torch",), "torchao": ("torch", "torchao.float8"),
           "te": ("torch", "transformer_engine.pytorch")}
"""What each part's child imports before its checks (child.py ``_pre_import``): the filler's
list."""
START_ORDER = ("te", "torchao", "base")
"""Slowest first (docs/gpu-results.md, 2026-11-27: TE 6.0-7.7 s, torchao 5.6-8.6 s, base
3.1-8.3 s of which the speed stage waits for the others' checks)."""
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
    """Children started before the facts were known, waiting for their request (and the
    bytecode cache's filler, when it is cold)."""

    lives: dict[str, _Live | ChildRun]
    timeout: float
    cache: bytecode.Cache
    used: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    filler: _Live | ChildRun | None = None

    def cancel(self) -> None:
        """End the children no request went to, and the filler (idempotent)."""
        if self.used:
            return
        self.used = True
        for live in self.lives.values():
            abandon(live)
        if self.filler is not None:
            abandon(self.filler)


def in_start_order(parts: Sequence[str]) -> list[str]:
    return sorted(parts, key=lambda p: START_ORDER.index(p) if p in START_ORDER else 0)


def resolve_cache(opts: Any, parts: Sequence[str]) -> bytecode.Cache:
    modules = sorted({m for p in parts for m in MODULES[p]})
    cache = bytecode.resolve(modules, enabled=getattr(opts, "cache", True),
                             folder=getattr(opts, "cache_dir", None))
    return cache.with_imports(list(dict.fromkeys(m for p in in_start_order(parts)[::-1]
                                                 for m in IMPORTS[p])))


def start_filler(opts: Any, cache: bytecode.Cache) -> _Live | ChildRun | None:
    """The filler child of a cold cache (None when the cache is not being filled)."""
    if cache.fill is None:
        return None
    return spawn(cache.fill.request(), opts.timeout, env=opts.env,
                 launch=bytecode.launch(cache, "filler"))


def end_filler(filler: _Live | ChildRun | None, timeout: float) -> str | None:
    """Collect a filler that finished, end one still running; what became of it."""
    if filler is None:
        return None
    if isinstance(filler, ChildRun):
        return f"could not start: {filler.error}"
    if filler.child.done():
        run = _finish(filler, timeout)
        errors = (run.doc.get("fill") or {}).get("errors") if run.status == "ok" else None
        return ("complete" + (f" (imports that failed: {', '.join(sorted(errors))})"
                              if errors else "")) if run.status == "ok" else \
            f"failed: {run.error}"
    abandon(filler)
    return "stopped with the smoke step; the next run goes on filling"


def prestart(opts: Any, parts: Sequence[str]) -> Early | None:
    """Start the children of ``parts`` now, each importing and then waiting (see module doc)."""
    if opts.command is not None or not supported() or not parts:
        return None
    cache = resolve_cache(opts, parts)
    smoke = bytecode.launch(cache, "smoke")
    lives = {p: spawn(None, opts.timeout, env=opts.env, part=p, launch=smoke)
             for p in in_start_order(parts)}
    return Early(lives, opts.timeout, cache, filler=start_filler(opts, cache))


def run_parts(base: dict[str, Any], parts: Sequence[str], opts: Any, progress: Progress,
              early: Early | None = None) -> tuple[ChildRun, dict[str, Any]]:
    """Run the parts side by side (reusing ``early`` children); one merged run + details."""
    lockdir = tempfile.mkdtemp(prefix="fp8-doctor-gpulock-")
    lock = os.path.join(lockdir, "gpu.lock")
    filler: _Live | ChildRun | None = None
    try:
        with open(lock, "w", encoding="utf-8"):
            pass
        request = {**base, "gpu_lock": lock}
        live_early = early is not None and not early.used
        pre = early.lives if early is not None and live_early else {}
        filler = early.filler if early is not None and live_early else None
        if early is not None:
            early.used = True
            for name, live in pre.items():
                if name not in parts:
                    abandon(live)
        cache = early.cache if early is not None else resolve_cache(opts, parts)
        smoke = bytecode.launch(cache, "smoke")
        if early is None:
            filler = start_filler(opts, cache)
        started = {p: send(pre[p], request) if p in pre else
                   spawn(request, opts.timeout, env=opts.env, part=p, launch=smoke)
                   for p in in_start_order(parts)}
        lives = [started[p] for p in parts]
        progress(f"smoke: {len(lives)} child process(es) side by side ({', '.join(parts)})"
                 f"{', started early' if pre else ''}, timeout {opts.timeout:g} s"
                 f"{'; filling the bytecode cache beside them' if filler else ''}")
        runs = collect_all(lives, opts.timeout, progress)
        again = [i for i, r in enumerate(runs) if r.status != "ok" and _busy(r)]
        for i in again:   # exclusive compute mode: the GPU took one context at a time
            progress(f"smoke: the GPU refused a second process; running {parts[i]} alone")
            runs[i] = collect_all([spawn(request, opts.timeout, env=opts.env, part=parts[i],
                                         launch=smoke)], opts.timeout, progress)[0]
    finally:
        filled = end_filler(filler, opts.timeout)   # also on an interrupt: nothing outlives us
        for name in (lock, lockdir):
            try:
                (os.rmdir if name == lockdir else os.unlink)(name)
            except OSError:
                pass
    cache_details: dict[str, Any] = dict(cache.as_details())
    if filled:
        cache_details["filler"] = filled
    details = {"children": {p: r.seconds for p, r in zip(parts, runs)},
               "children_setup": {p: {k: r.doc[k] for k in ("setup_s", "cuda_warm", "torch_warm")
                                      if k in r.doc}
                                  for p, r in zip(parts, runs)},
               "bytecode_cache": cache_details, "started_early": bool(pre)}
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


