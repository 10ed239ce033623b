"""The device's CUDA context, made beside the smoke child's imports (issue 26: the check <= 5 s
where bytecode exists).

A smoke child imports torch and its backend (1.3-1.9 s and 1.9-2.9 s for TE with bytecode, H200,
docs/gpu-results.md) and only then makes its CUDA context in ``torch.cuda.set_device`` (the driver's
``cuInit`` and the primary context, a few hundred ms): one after the other, on the critical path.
Making the context in a thread through torch's own calls wins nothing, because they hold the GIL
while the imports need it (benchmarks/te_stage.py, 2026-11-24). A ``ctypes`` call releases the GIL
for as long as the foreign function runs, so this thread calls the driver API directly:
``cuInit(0)``, ``cuDeviceGet`` and ``cuDevicePrimaryCtxRetain``. The CUDA runtime, which torch uses,
works in the device's *primary* context, so torch's ``set_device`` later finds it made. The driver
API is thread-safe: whichever of the two calls first does the work, the other waits for it, so the
child never needs to wait for this thread, and a hung driver hangs torch's own call just the same
(the parent's timeout ends the child either way).

Behaviour kept identical to a child without it: ``CUDA_MODULE_LOADING`` is set to ``LAZY`` where
the user has not set it, before ``cuInit`` reads it, as torch does before its own initialisation
(``maybe_set_cuda_module_loading("LAZY")``, aten/src/ATen/cuda/detail/CUDAHooks.cpp, torch
v2.11.0); the device is the one the request names (``cuda`` is ordinal 0 of the visible devices,
as for torch; ``CUDA_VISIBLE_DEVICES`` is applied by the driver to both). Any failure (no
``libcuda.so.1``, no device, an error code) is recorded and changes nothing: torch then meets the
same condition and the child reports it as before. The context is retained once more and never
released: the process ends with ``os._exit`` (child.py). ``libcuda.so.1`` is found as the CUDA
runtime under torch finds it; entries of the job's folders on ``LD_LIBRARY_PATH``,
``LD_PRELOAD`` and the like never reach a child (``isolate.loader_env``, applied by ``proc.start``,
redteam4: a job's own ``lib/libcuda.so.1`` would otherwise run its constructor here).
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
import time
from typing import Any

from preflight.base.digits import ascii_digits

LIBCUDA = "libcuda.so.1"


def ordinal(device: str | None) -> int | None:
    """The CUDA ordinal a device string names (``cuda`` -> 0, ``cuda:2`` -> 2); None otherwise."""
    if not device or not device.startswith("cuda"):
        return None
    if device == "cuda":
        return 0
    head, _, index = device.partition(":")
    if head != "cuda" or not ascii_digits(index) or len(index) > 4:
        return None
    return int(index)


REQUEST_POLL_S = 0.02
REQUEST_WAIT_S = 900.0
"""How long a waiting child's thread watches for its request (the parent's timeout ends the
child sooner)."""


def await_request(path: str, wait_s: float | None = None) -> dict[str, Any] | None:
    """The request at ``path`` once the parent has written it (atomically; a document that is no
    mapping counts as ``{"cancel": true}``), polled every :data:`REQUEST_POLL_S`; None when
    ``wait_s`` passes first (None: no limit, the parent's timeout bounds the wait). A file that
    does not parse raises (ValueError), another read error too (OSError). The smoke child's main
    thread and this module's thread both wait with it."""
    deadline = None if wait_s is None else time.monotonic() + wait_s
    while deadline is None or time.monotonic() < deadline:
        try:
            with open(path, encoding="utf-8") as fh:
                doc = json.load(fh)
        except FileNotFoundError:
            time.sleep(REQUEST_POLL_S)
            continue
        return doc if isinstance(doc, dict) else {"cancel": True}
    return None


class Warm:
    """The thread and what it found (``details()``: seconds and driver result codes).

    ``index``: make that device's context now. ``request``: first wait for the request file of a
    child started early (child.py ``--wait``) and make the context only once it names a CUDA
    device: a check whose facts say no smoke step (``{"cancel": true}``) leaves the GPU untouched,
    as it did before this thread existed (a context takes GPU memory a training job beside the
    check may need)."""

    def __init__(self, index: int | None = None, request: str | None = None) -> None:
        self.index, self.request = index, request
        self.result: dict[str, Any] = {"device": index, "status": "running"}
        self._t0 = time.perf_counter()
        self.thread = threading.Thread(target=self._run, name="fp8-doctor-cuda-warm", daemon=True)

    def _run(self) -> None:
        res = self.result
        try:
            if self.request is not None:
                self.index = self._await(self.request)
                res["device"] = self.index
                if self.index is None:
                    return
            self._make(res, int(self.index or 0))
        finally:
            res["seconds"] = round(time.perf_counter() - self._t0, 3)

    def _await(self, path: str) -> int | None:
        """The device ordinal the request names, once it is there (None: no context to make)."""
        try:
            doc = await_request(path, REQUEST_WAIT_S)
        except (OSError, ValueError):
            doc = None
        device = doc.get("device", "cuda") if doc is not None and not doc.get("cancel") else None
        index = ordinal(device if isinstance(device, str) else None)
        if index is None:
            self.result["status"] = "not needed"
            return None
        self.result["waited_s"] = round(time.perf_counter() - self._t0, 3)
        return index

    def _make(self, res: dict[str, Any], index: int) -> None:
        t0 = time.perf_counter()
        try:
            cu = ctypes.CDLL(LIBCUDA)
            rc = cu.cuInit(0)
            res["init_s"] = round(time.perf_counter() - t0, 3)
            if rc != 0:
                res.update(status="driver error", call="cuInit", code=int(rc))
                return
            dev = ctypes.c_int()
            rc = cu.cuDeviceGet(ctypes.byref(dev), ctypes.c_int(index))
            if rc != 0:
                res.update(status="driver error", call="cuDeviceGet", code=int(rc))
                return
            ctx = ctypes.c_void_p()
            rc = cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
            if rc != 0:
                res.update(status="driver error", call="cuDevicePrimaryCtxRetain", code=int(rc))
                return
            res["status"] = "made"
        except (OSError, AttributeError) as exc:   # no driver library, or one without the API
            res.update(status="unavailable", error=f"{type(exc).__name__}: {exc}"[:300])

    def details(self) -> dict[str, Any]:
        """What the thread did so far (a copy: it may still be running)."""
        return dict(self.result)


def _started(warm: Warm) -> Warm | None:
    try:
        warm.thread.start()
    except RuntimeError:   # no thread can be started (a process limit): torch does it later
        return None
    return warm


def start(device: str | None) -> Warm | None:
    """Start making ``device``'s primary context in a thread; None where it names no CUDA
    device."""
    index = ordinal(device)
    if index is None:
        return None
    os.environ.setdefault("CUDA_MODULE_LOADING", "LAZY")
    return _started(Warm(index))


def start_on_request(path: str) -> Warm | None:
    """For a child started before its request: make the context once the request at ``path``
    names a CUDA device (see :class:`Warm`). ``CUDA_MODULE_LOADING`` is set here, in the calling
    thread: changing the environment while another thread reads it is not safe in C."""
    os.environ.setdefault("CUDA_MODULE_LOADING", "LAZY")
    return _started(Warm(request=path))


def for_child(path: str, request: Any) -> Warm | None:
    """The thread of a smoke child: ``request`` is its request, or None for a child started
    before it (which watches ``path``)."""
    if request is None:
        return start_on_request(path)
    device = request.get("device", "cuda") if isinstance(request, dict) else None
    return start(device if isinstance(device, str) else None)
