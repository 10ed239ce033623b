"""torch's first use of the GPU, made in a thread while a smoke child imports its backend (issue
26: the check <= 5 s where bytecode exists).

The TE child imports torch (1.3-1.9 s with bytecode), then Transformer Engine (1.2-1.9 s), then
runs its checks; their first pass took 0.9 s longer than the same checks again in the process
(H200, docs/gpu-results.md, 2026-11-27 third session): TE's NVRTC compiles (0.43 s) and the first
use of cuBLAS / cuBLASLt and of autograd. The last two are torch's, not TE's, and need torch only:
this thread does them while the main thread still imports TE. torch's operators release the GIL
while they run (its generated Python bindings drop it around each dispatch), so cuBLAS's handle,
its lazily loaded kernels and autograd's device threads come up beside the import instead of
after it; cudawarm.py's context is made first (this thread waits for it: without a context there
is nothing to warm).

What it runs changes nothing a check measures: constant tensors (``torch.full``: the random
generators the checks seed are never drawn from), a 256 x 256 BF16 matmul and its backward, and,
on a GPU of compute capability 8.9 or more, one FP8 ``torch._scaled_mm`` of the same size; under
the request's GPU lock, shared, as the checks take it, so a speed stage (exclusive) never times
beside it. Any failure is recorded and ignored: the checks meet the same condition and report it
themselves. The child never waits for this thread (a daemon; the process ends with ``os._exit``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from preflight.smoke.cudawarm import await_request

SIZE = 256
CONTEXT_WAIT_S = 900.0
"""How long the thread waits for cudawarm.py's context (the parent's timeout ends the child
sooner)."""
REQUEST_READ_S = 5.0
"""The request is on disk once the context is made (cudawarm.py waits for it): a short wait."""


class TorchWarm:
    """The thread and what it found (``details()``)."""

    def __init__(self, torch: Any, cuda: Any, request: str | dict[str, Any],
                 lock: Callable[[str | None, bool], Any]) -> None:
        self.torch, self.cuda, self.request, self.lock = torch, cuda, request, lock
        self.result: dict[str, Any] = {"status": "running"}
        self._t0 = time.perf_counter()
        self.thread = threading.Thread(target=self._run, name="fp8-doctor-torch-warm", daemon=True)

    def _run(self) -> None:
        res = self.result
        try:
            self.cuda.thread.join(CONTEXT_WAIT_S)
            made = self.cuda.details()
            if made.get("status") != "made":
                res["status"] = f"skipped: context {made.get('status')}"
                return
            res["waited_s"] = round(time.perf_counter() - self._t0, 3)
            req = self.request
            if isinstance(req, str):   # a child started early: its request is there by now
                req = await_request(req, REQUEST_READ_S) or {}
            path = req.get("gpu_lock")
            with self.lock(path if isinstance(path, str) else None, False):
                self._use(int(made.get("device") or 0))
            res["status"] = "done"
        except Exception as exc:  # noqa: BLE001 - a warm-up never fails the child
            res.update(status="error", error=f"{type(exc).__name__}: {exc}"[:300])
        finally:
            res["seconds"] = round(time.perf_counter() - self._t0, 3)

    def _use(self, index: int) -> None:
        torch = self.torch
        dev = torch.device("cuda", index)
        with torch.cuda.device(dev):
            a = torch.full((SIZE, SIZE), 0.5, device=dev, dtype=torch.bfloat16, requires_grad=True)
            (a @ a).float().sum().backward()
            if torch.cuda.get_device_capability(dev) >= (8, 9) and hasattr(torch, "_scaled_mm"):
                x = torch.full((SIZE, SIZE), 1.0, device=dev).to(torch.float8_e4m3fn)
                one = torch.ones((), device=dev)
                torch._scaled_mm(x, x.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            torch.cuda.synchronize(dev)

    def details(self) -> dict[str, Any]:
        """What the thread did so far (a copy: it may still be running)."""
        return dict(self.result)


def start(torch: Any, cuda: Any, request: str | dict[str, Any],
          lock: Callable[[str | None, bool], Any]) -> TorchWarm | None:
    """Start the thread after ``import torch``. ``cuda``: cudawarm.py's thread (None: no CUDA
    device named, nothing to warm); ``request``: the child's request, or its path for a child
    started early; ``lock(path, exclusive)``: the child's GPU lock. None where no thread starts."""
    if cuda is None:
        return None
    warm = TorchWarm(torch, cuda, request, lock)
    try:
        warm.thread.start()
    except RuntimeError:
        return None
    return warm
