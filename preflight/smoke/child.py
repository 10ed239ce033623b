"""The smoke child: ``python -m preflight.smoke.child REQUEST.json RESULT.json``.

This is the only place fp8-doctor imports torch / torchao / transformer_engine. It runs the
checks stage by stage and rewrites RESULT.json after each stage, so that when a later stage
crashes the process or hangs (and the parent kills it) the earlier results survive. A CUDA error
stops the run: the CUDA context is unusable after one, and later numbers would be noise.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import traceback
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


def _run_stage(res: Results, name: str, fn: Any) -> bool:
    """Run one stage; record its result or its error. False when the run must stop."""
    res.stage(name)
    t0 = time.perf_counter()
    try:
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


def main(argv: list[str]) -> int:
    req_path, out_path = argv[1], argv[2]
    with open(req_path, encoding="utf-8") as fh:
        req = json.load(fh)
    res = Results(out_path)
    res.stage("import torch")
    t0 = time.perf_counter()
    import torch

    res.doc["torch_import_s"] = round(time.perf_counter() - t0, 3)
    res.doc["torch_version"] = torch.__version__
    device = req.get("device", "cuda")
    res.doc["device"] = device
    res.stage("setup")
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
        cc = torch.cuda.get_device_capability(device)
        res.doc.update(device_name=torch.cuda.get_device_name(device), cc=f"{cc[0]}.{cc[1]}",
                       device_count=torch.cuda.device_count(), cuda=torch.version.cuda)
    else:
        res.doc["device_name"] = "cpu"
    res.doc["device"] = device
    requested = list(req.get("backends") or ["auto"])
    only = req.get("only")  # None: every installed backend
    on_cuda = device.startswith("cuda")
    resume = bool(req.get("resume", True))

    from preflight.smoke import scaled_mm as smm

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
    for name, fn in stages:
        if not _run_stage(res, name, fn):
            return 0
    if on_cuda:
        torch.cuda.synchronize(device)
    res.doc["done"] = True
    res.doc["stage"] = "done"
    res.doc["seconds"] = round(time.time() - res.doc["started"], 3)
    res.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
