"""The smoke child: ``python -m preflight.smoke.child REQUEST.json RESULT.json [--part P]
[--wait]``.

This is the only place fp8-doctor imports torch / torchao / transformer_engine. It runs the
checks stage by stage and rewrites RESULT.json after each stage, so that when a later stage
crashes the process or hangs (and the parent kills it) the earlier results survive. A CUDA error
stops the run: the CUDA context is unusable after one, and later numbers would be noise.

``--part`` runs one part of the step, so that the backends' children run side by side (issue
26): ``base`` (the raw ``_scaled_mm`` checks and the speed stage), ``torchao`` or ``te``; without
it, every stage, one after the other. ``--wait``: the child was started before the doctor knew
what to ask (while its static check runs); it imports torch (and its backend) first, then waits
for REQUEST.json to appear (``{"cancel": true}`` ends it); a thread makes its CUDA context as soon
as the request names a CUDA device, while the imports go on (cudawarm.py). With a ``gpu_lock``
file in the request the stages take it shared and the speed stage exclusive (``fcntl.flock``):
timings are never taken
while another child's checks run on the same GPU. A backend is imported before its stage takes
the lock (an import needs no GPU), so a speed stage never waits for another child's import.

A request ``{"fill": ...}`` makes this process the bytecode cache's filler (smoke/cache.py): it
imports and records, nothing else.

The imports run with Python's cyclic garbage collector paused, and what they made is then frozen
(``gc.freeze``) before the checks run with the collector on again (:func:`_imports`): each
collection of the oldest generation walks every object alive, and importing torch and a backend
creates hundreds of thousands (modules, classes, functions) while triggering collection after
collection. On the dev box (Python 3.11, 2 cores) ``import torch, torch._dynamo`` (what TE
imports) took 1.83-2.15 s with the collector and 1.26-1.38 s without, ``import torch,
torchao.float8`` 1.94-2.06 s against 1.43-1.55 s, for 7 MB more peak memory; on an H100 the TE
child took 5.01 s with the collector and 4.12 s without (torch 1.43 -> 1.12 s, TE 1.68 -> 1.22 s;
benchmarks/te_child_bisect.py, docs/gpu-results.md). The checks see the collector as any training
job does.

The process leaves with ``os._exit`` once RESULT.json is written: the interpreter's teardown
after torch and a backend were imported (module finalisation, atexit hooks, the CUDA runtime's
own) took 0.6 s (torch) and 1.2 s (torch and torchao) on the dev box, 0.03-0.06 s with
``os._exit`` (``benchmarks/child_exit.py``, docs/benchmarks.md), and decides nothing: the parent
waits for that exit, and kills the child's process group afterwards anyway.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import json
import os
import sys
import time
import traceback
from collections.abc import Iterator
from typing import Any

CUDA_ERROR_MARKERS = ("CUDA error", "CUBLAS_STATUS", "cuBLAS", "device-side assert",
                      "illegal memory access", "cudaError", "CUDA driver error", "NCCL error")


class Results:
    """The result document, flushed to disk atomically after every change of stage."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.doc: dict[str, Any] = {"stage": "start", "done": False, "started": time.time()}

    def stage(self, name: str) -> None:
        self.doc["stage"] = name
        self.flush()

    def flush(self) -> None:
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(self.doc, fh)
        os.replace(tmp, self.path)


def _is_cuda_error(text: str) -> bool:
    return any(m in text for m in CUDA_ERROR_MARKERS)


PARTS = ("base", "torchao", "te")
STAGES_OF = {"base": ("scaled_mm", "speed"), "torchao": ("torchao",), "te": ("te",)}


@contextlib.contextmanager
def _gpu_lock(path: str | None, exclusive: bool) -> Iterator[None]:
    """The request's GPU lock, shared for checks and exclusive for timings; none without."""
    try:
        import fcntl
    except ImportError:   # not POSIX: the parent runs one child only (smoke/__init__.py)
        path = None
    if not path:
        yield
        return
    fd = os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)   # closing releases the lock


def _run_stage(res: Results, name: str, fn: Any, lock: str | None = None) -> bool:
    """Run one stage; record its result or its error. False when the run must stop."""
    res.stage(name)
    t0 = time.perf_counter()
    try:
        with _gpu_lock(lock, exclusive=name == "speed"):
            out = fn()
    except ImportError as exc:
        res.doc[name] = {"error": f"not importable: {exc}", "importable": False}
        return True
    except Exception as exc:  # noqa: BLE001 - every failure is a result
        text = f"{type(exc).__name__}: {exc}"
        res.doc[name] = {"error": text[:2000], "traceback": traceback.format_exc(limit=6)[-3000:]}
        if _is_cuda_error(text):
            res.doc["fatal"] = {"kind": "cuda_error", "stage": name, "text": text[:2000]}
            res.flush()
            return False
        return True
    out["seconds"] = round(time.perf_counter() - t0, 3)
    res.doc[name] = out
    res.flush()
    return True


def _wanted(backend: str, requested: list[str], module: str,
            only: list[str] | None = None) -> bool:
    """Named backends always run; ``auto`` runs each installed one, or only the job's own
    (``only``, set by the parent when the job's configs name its FP8 backend)."""
    if backend in requested:
        return True
    if only is not None and backend not in only:
        return False
    return "auto" in requested and importlib.util.find_spec(module) is not None


@contextlib.contextmanager
def _imports() -> Iterator[None]:
    """Imports with the cyclic collector paused; what they made is frozen after (module doc)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()   # never walked again by a collection: it lives as long as the process
        if was:
            gc.enable()


def _pre_import(part: str | None, res: Results) -> None:
    """What a part imports before its request arrives: its backend (TE's JAX side refused, as
    its stage does). A failure is left for the stage to report when it imports again."""
    if part not in ("torchao", "te"):
        return
    res.stage(f"import {part}")
    t0 = time.perf_counter()
    try:
        with _imports():
            if part == "te":
                from preflight.smoke.te_check import _without_te_jax

                with _without_te_jax():
                    import transformer_engine.pytorch  # noqa: F401
            else:
                import torchao.float8  # noqa: F401
    except BaseException:  # noqa: BLE001 - the stage imports again and reports it
        pass
    res.doc[f"{part}_import_s"] = round(time.perf_counter() - t0, 3)


def _import_torch(res: Results, part: str | None, then: Any = None) -> Any:
    """torch, and ``part``'s backend (a child started early imports it before its request);
    ``then(torch)`` runs between the two (torchwarm.py's thread starts there)."""
    res.stage("import torch")
    t0 = time.perf_counter()
    with _imports():
        import torch

    res.doc["torch_import_s"] = round(time.perf_counter() - t0, 3)
    if then is not None:
        then(torch)
    _pre_import(part, res)
    return torch


def _torch_warm(part: str | None, cuda: Any, request: Any, into: list[Any]) -> Any:
    """What starts torch's own first use of the GPU beside the backend's import (torchwarm.py)
    once torch is imported; None for a part that imports no backend (nothing to overlap)."""
    if part not in ("te", "torchao"):
        return None

    def then(torch: Any) -> None:
        from preflight.smoke import torchwarm

        into.append(torchwarm.start(torch, cuda, request, _gpu_lock))

    return then


def main(argv: list[str]) -> int:
    req_path, out_path = argv[1], argv[2]
    part = argv[argv.index("--part") + 1] if "--part" in argv[3:] else None
    res = Results(out_path)
    if "--wait" not in argv[3:]:
        with open(req_path, encoding="utf-8") as fh:
            req = json.load(fh)
        if isinstance(req, dict) and isinstance(req.get("fill"), dict):
            from preflight.smoke import cache

            res.stage("fill")
            with _imports():
                res.doc["fill"] = cache.fill(req["fill"])
            res.doc.update(done=True, stage="done")
            res.flush()
            return 0
    waiting = "--wait" in argv[3:]
    # The CUDA context, made beside the imports below (cudawarm.py: a ctypes call frees the GIL);
    # a waiting child makes it once its request names a CUDA device, never for a cancelled one.
    from preflight.smoke import cudawarm

    warm = cudawarm.for_child(req_path, None if waiting else req)
    warms: list[Any] = []
    torch = _import_torch(res, part if waiting else None,
                          _torch_warm(part, warm, req_path if waiting else req, warms))
    if waiting:
        res.stage("waiting for the request")
        req = cudawarm.await_request(req_path) or {"cancel": True}   # no limit: never None
        if req.get("cancel"):
            return 0
    res.doc["torch_version"] = torch.__version__
    device = req.get("device", "cuda")
    res.doc["device"] = device
    res.stage("setup")
    t_setup = time.perf_counter()
    cc: tuple[int, int] | None = None
    if not hasattr(torch, "float8_e4m3fn"):
        res.doc["fatal"] = {"kind": "no_fp8", "stage": "setup",
                            "text": f"torch {torch.__version__} has no float8 dtypes (needs >= 2.1)"}
        res.flush()
        return 0
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            res.doc["fatal"] = {"kind": "no_device", "stage": "setup",
                                "text": "torch.cuda.is_available() is False in the smoke child"}
            res.flush()
            return 0
        if ":" not in device:  # set_device and the timers want an explicit index
            device = f"cuda:{torch.cuda.current_device()}"
        torch.cuda.set_device(device)
        if warm is not None:
            res.doc["cuda_warm"] = warm.details()
        cc = torch.cuda.get_device_capability(device)
        res.doc.update(device_name=torch.cuda.get_device_name(device), cc=f"{cc[0]}.{cc[1]}",
                       device_count=torch.cuda.device_count(), cuda=torch.version.cuda,
                       setup_s=round(time.perf_counter() - t_setup, 3))
    else:
        res.doc["device_name"] = "cpu"
    res.doc["device"] = device
    res.doc["gc"] = {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}
    requested = list(req.get("backends") or ["auto"])
    only = req.get("only")  # None: every installed backend
    on_cuda = device.startswith("cuda")
    resume = bool(req.get("resume", True))

    from preflight.smoke import scaled_mm as smm

    res.doc["part"] = part
    stages: list[tuple[str, Any]] = []
    if "auto" in requested or "scaled_mm" in requested or req.get("gemm_only"):
        stages.append(("scaled_mm", lambda: smm.run_all(device, strict_e5m2=on_cuda)))
    if not req.get("gemm_only"):
        if _wanted("torchao", requested, "torchao", only):
            from preflight.smoke import torchao_check

            emulate = not on_cuda or (cc is not None and cc < (8, 9))
            stages.append(("torchao", lambda: torchao_check.run_all(device, emulate, resume)))
        # TE has no CPU path: under "auto" on the CPU it is not applicable (asked for by name,
        # it runs and reports what TE says).
        if (on_cuda or "te" in requested) and _wanted("te", requested, "transformer_engine", only):
            from preflight.smoke import te_check

            stages.append(("te", lambda: te_check.run_all(device, cc, resume)))
        if on_cuda and req.get("speed", True):
            from preflight.smoke import speed

            shapes = req.get("shapes") or []
            stages.append(("speed", lambda: speed.run_all(device, shapes)))
    if part in STAGES_OF:
        stages = [(name, fn) for name, fn in stages if name in STAGES_OF[part]]
    lock = req.get("gpu_lock") if on_cuda else None
    for name, fn in stages:
        if name in ("torchao", "te") and f"{name}_import_s" not in res.doc:
            _pre_import(name, res)   # before the GPU lock: another child may time meanwhile
        if not _run_stage(res, name, fn, lock):
            return 0
    if on_cuda:
        torch.cuda.synchronize(device)
    res.doc.update({"torch_warm": w.details() for w in warms if w is not None})
    res.doc["done"] = True
    res.doc["stage"] = "done"
    res.doc["seconds"] = round(time.time() - res.doc["started"], 3)
    res.flush()
    return 0


def _leave(code: int) -> None:
    """Exit now, skipping the interpreter's teardown (see the module doc)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)


if __name__ == "__main__":
    _leave(main(sys.argv))
