"""The CUDA context made beside the smoke child's imports (smoke/cudawarm.py): which device a
request names, what the thread records when the driver is missing or lacks the API, that the
user's ``CUDA_MODULE_LOADING`` wins, and a real early child that carries the device and still runs
its request. The GPU case (the context really made, torch then using it) runs with ``-m gpu``."""

from __future__ import annotations

import ctypes.util
import os

import pytest

from preflight.smoke import cudawarm
from preflight.smoke.runner import ChildRun, collect_all, send, spawn


@pytest.mark.parametrize(("device", "index"), [
    ("cuda", 0), ("cuda:0", 0), ("cuda:3", 3), ("cpu", None), ("", None), (None, None),
    ("cuda:", None), ("cuda:x", None), ("cudax", None), ("cuda:1:2", None), ("cuda:99999", None),
    ("meta", None), ("cuda:-1", None),
])
def test_the_ordinal_a_device_names(device: str | None, index: int | None) -> None:
    assert cudawarm.ordinal(device) == index


def test_no_cuda_device_no_thread_and_no_env_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUDA_MODULE_LOADING", raising=False)
    assert cudawarm.start("cpu") is None
    assert cudawarm.start(None) is None
    assert "CUDA_MODULE_LOADING" not in os.environ


def test_a_library_without_the_driver_api_is_recorded_not_raised(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The C library loads wherever this suite runs and has no cuInit: the AttributeError path.
    libc = ctypes.util.find_library("c")
    if libc is None:
        pytest.skip("no C library found by ctypes.util.find_library('c')")
    monkeypatch.setattr(cudawarm, "LIBCUDA", libc)
    monkeypatch.delenv("CUDA_MODULE_LOADING", raising=False)
    warm = cudawarm.start("cuda:1")
    assert warm is not None
    warm.thread.join(60)
    got = warm.details()
    assert got["status"] == "unavailable" and got["device"] == 1
    assert "AttributeError" in got["error"]
    assert os.environ["CUDA_MODULE_LOADING"] == "LAZY"   # what torch itself would set


def test_a_missing_driver_library_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cudawarm, "LIBCUDA", "libfp8-doctor-no-such-library.so.1")
    warm = cudawarm.start("cuda")
    assert warm is not None
    warm.thread.join(60)
    assert warm.details()["status"] == "unavailable"
    assert "OSError" in warm.details()["error"]


def test_the_users_module_loading_setting_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cudawarm, "LIBCUDA", "libfp8-doctor-no-such-library.so.1")
    monkeypatch.setenv("CUDA_MODULE_LOADING", "EAGER")
    warm = cudawarm.start("cuda")
    assert warm is not None
    warm.thread.join(60)
    assert os.environ["CUDA_MODULE_LOADING"] == "EAGER"


def test_an_early_child_told_its_device_runs_its_request() -> None:
    pytest.importorskip("torch")
    live = spawn(None, 120, part="base", device="cuda")
    assert not isinstance(live, ChildRun)
    assert live.child.proc is not None
    argv = live.child.proc.args
    assert list(argv[-2:]) == ["--device", "cuda"] and "--wait" in argv
    run = collect_all([send(live, {"device": "cpu", "backends": ["scaled_mm"], "speed": False})],
                      120)[0]
    assert run.status == "ok", run.error
    assert run.doc["scaled_mm"]["engaged"] is True
    assert "cuda_warm" not in run.doc          # a CPU request: no CUDA setup to report on


@pytest.mark.gpu
def test_on_a_gpu_the_context_is_made_and_torch_uses_it() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    live = spawn(None, 300, part="base", device="cuda")
    assert not isinstance(live, ChildRun)
    run = collect_all([send(live, {"device": "cuda", "backends": ["scaled_mm"],
                                   "speed": False})], 300)[0]
    assert run.status == "ok", run.error
    assert run.doc["cuda_warm"]["status"] in ("made", "running"), run.doc["cuda_warm"]
    assert run.doc["scaled_mm"]["engaged"] is True
