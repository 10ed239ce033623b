"""The CUDA context made beside the smoke child's imports (smoke/cudawarm.py): which device a
request names, what the thread records when the driver is missing or lacks the API, that the
user's ``CUDA_MODULE_LOADING`` wins, that a child started early touches the driver only once its
request names a CUDA device (never for a cancelled one), and a real early child. The GPU case (the context really made, torch then using it) runs with ``-m gpu``."""

from __future__ import annotations

import ctypes.util
import json
import os
from pathlib import Path

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


def _watch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doc: object | None) -> dict:
    monkeypatch.setattr(cudawarm, "LIBCUDA", "libfp8-doctor-no-such-library.so.1")
    path = tmp_path / "request.json"
    path.unlink(missing_ok=True)                  # each watch sees only its own request
    warm = cudawarm.start_on_request(str(path))
    assert warm is not None
    if doc is not None:
        tmp = tmp_path / "request.json.tmp"
        tmp.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
        os.replace(tmp, path)                     # as runner.send writes it
    warm.thread.join(60)
    assert not warm.thread.is_alive()
    return warm.details()


def test_a_waiting_child_makes_no_context_for_a_cancelled_or_cpu_request(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A check whose facts say no smoke step leaves the GPU untouched (a training job beside it
    # may need that memory): no driver call at all.
    for doc in ({"cancel": True}, {"device": "cpu"}, {"device": "meta"}, ["not", "a", "dict"],
                "{broken json"):
        got = _watch(tmp_path, monkeypatch, doc)
        assert got["status"] == "not needed" and "init_s" not in got, (doc, got)


def test_a_waiting_child_makes_the_context_its_request_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    got = _watch(tmp_path, monkeypatch, {"device": "cuda:2", "backends": ["te"]})
    assert got["device"] == 2 and "waited_s" in got
    assert got["status"] == "unavailable"          # the driver call was made (no driver here)


def test_the_watch_ends_when_no_request_comes(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cudawarm, "REQUEST_WAIT_S", 0.1)
    got = _watch(tmp_path, monkeypatch, None)
    assert got["status"] == "not needed"


def test_an_early_child_runs_its_request_beside_the_thread() -> None:
    pytest.importorskip("torch")
    live = spawn(None, 120, part="base")
    assert not isinstance(live, ChildRun)
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
    live = spawn(None, 300, part="base")
    assert not isinstance(live, ChildRun)
    run = collect_all([send(live, {"device": "cuda", "backends": ["scaled_mm"],
                                   "speed": False})], 300)[0]
    assert run.status == "ok", run.error
    assert run.doc["cuda_warm"]["status"] in ("made", "running"), run.doc["cuda_warm"]
    assert run.doc["scaled_mm"]["engaged"] is True
