"""smoke/torchwarm.py: torch's first GPU use beside the backend's import (issue 26)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from preflight.smoke import torchwarm
from preflight.smoke.runner import ChildRun, collect_all, send, spawn


class FakeCuda:
    """cudawarm.Warm's interface: a finished thread and its result."""

    def __init__(self, status: str, device: int = 0) -> None:
        self.thread = threading.Thread(target=lambda: None)
        self.thread.start()
        self._doc = {"status": status, "device": device}

    def details(self) -> dict[str, Any]:
        return dict(self._doc)


class Locks:
    def __init__(self) -> None:
        self.taken: list[tuple[str | None, bool]] = []

    @contextlib.contextmanager
    def __call__(self, path: str | None, exclusive: bool) -> Iterator[None]:
        self.taken.append((path, exclusive))
        yield


def _finish(warm: torchwarm.TorchWarm | None) -> dict[str, Any]:
    assert warm is not None
    warm.thread.join(60)
    assert not warm.thread.is_alive()
    return warm.details()


def test_no_cuda_thread_means_no_warm_thread() -> None:
    assert torchwarm.start(object(), None, {}, Locks()) is None


def test_without_a_context_nothing_is_touched_and_no_lock_taken() -> None:
    locks = Locks()
    got = _finish(torchwarm.start(object(), FakeCuda("driver error"), {"gpu_lock": "x"}, locks))
    assert got["status"].startswith("skipped")
    assert locks.taken == []


def test_a_failure_is_recorded_never_raised_and_the_lock_is_shared(tmp_path: Path) -> None:
    class Broken:   # torch whose device calls fail, as on a machine whose GPU went away
        def device(self, *_: Any) -> Any:
            raise RuntimeError("CUDA error: no device")

    req = tmp_path / "req.json"
    req.write_text(json.dumps({"device": "cuda:0", "gpu_lock": str(tmp_path / "lock")}))
    locks = Locks()
    got = _finish(torchwarm.start(Broken(), FakeCuda("made"), str(req), locks))
    assert got["status"] == "error" and "RuntimeError" in got["error"]
    assert locks.taken == [(str(tmp_path / "lock"), False)]   # shared, as the checks take it


def test_the_warm_up_leaves_the_random_generators_alone() -> None:
    torch = pytest.importorskip("torch")

    class CpuTorch:
        """Real torch with its CUDA calls pointed at the CPU: the same operators run."""

        def __getattr__(self, name: str) -> Any:
            return getattr(torch, name)

        def device(self, *_: Any) -> Any:
            return torch.device("cpu")

        class cuda:  # noqa: N801 - torch's own name
            device = staticmethod(lambda _d: contextlib.nullcontext())
            get_device_capability = staticmethod(lambda _d: (9, 0))
            synchronize = staticmethod(lambda _d: None)

    torch.manual_seed(1234)
    before = torch.get_rng_state().clone()
    got = _finish(torchwarm.start(CpuTorch(), FakeCuda("made"), {}, Locks()))
    assert got["status"] in ("done", "error"), got   # CPU builds may lack an FP8 matmul
    assert torch.equal(torch.get_rng_state(), before)


def test_a_base_child_starts_no_warm_thread() -> None:
    pytest.importorskip("torch")
    live = spawn(None, 120, part="base")
    assert not isinstance(live, ChildRun)
    run = collect_all([send(live, {"device": "cpu", "backends": ["scaled_mm"], "speed": False})],
                      120)[0]
    assert run.status == "ok", run.error
    assert "torch_warm" not in run.doc


@pytest.mark.gpu
def test_on_a_gpu_torch_is_warmed_beside_the_backend_import() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchao")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    live = spawn(None, 300, part="torchao")
    assert not isinstance(live, ChildRun)
    run = collect_all([send(live, {"device": "cuda", "backends": ["torchao"], "speed": False,
                                   "resume": False})], 300)[0]
    assert run.status == "ok", run.error
    assert run.doc["torch_warm"]["status"] == "done", run.doc["torch_warm"]
