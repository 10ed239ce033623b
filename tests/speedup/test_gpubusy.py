"""The trial's GPU-busy sampling (speedup/gpubusy.py) and the note it leads to (hostmargin.notes).
Real NVML runs on the GPU machine (benchmarks/trial_validate.py); here: the logic over samples,
the UUID match with a fake of the two NVML calls it makes, and the real absence of NVML."""

from __future__ import annotations

import types
from typing import Any

import pytest

from preflight.speedup import gpubusy, hostmargin


def _run(precision: str, depth: int, busy: list[int]) -> dict[str, Any]:
    return {"precision": precision, "depth": depth, "busy_pct": busy}


def test_median_of_the_deepest_depth_of_that_precision() -> None:
    runs = [_run("fp8", 8, [99, 99, 99]), _run("fp8", 16, [70, 95, 72, 71, 96]),
            _run("bf16", 16, [100, 98, 99])]
    assert gpubusy.median_busy(runs, "fp8") == 72
    assert gpubusy.median_busy(runs, "bf16") == 99
    assert gpubusy.median_busy([_run("fp8", 16, [])], "fp8") is None
    assert gpubusy.median_busy([], "fp8") is None


@pytest.mark.parametrize(("fp8", "noted"), [([60, 70, 80], True), ([89, 89, 89], True),
                                            ([90, 90, 91], False), ([100, 99, 98], False),
                                            ([], False)])
def test_the_host_bound_note(fp8: list[int], noted: bool) -> None:
    notes = hostmargin.notes([_run("fp8", 16, fp8), _run("bf16", 16, [99, 99, 99])], 0.15)
    assert bool(notes) is noted
    if noted:
        assert (f"busy only {sorted(fp8)[1]}% of the FP8 step at 16 layers (the BF16 step: 99% "
                "busy)") in notes[0]


# The H100 trial of 2026-11-27 (16 layers, TE delayed, eager): median 100%, three steps idle.
H100_FP8 = [83, 89, 96, 96, 95, 100, 100, 100, 100, 100, 70, 100]
# An H200 host whose real FP8 steps ran a steady 157 ms (lowest of 45: 90%), one step made 89%.
STEADY = [100, 96, 98, 98, 100, 100, 97, 96, 100, 100, 100, 89, 98, 99, 99]


def test_some_idle_steps_are_noted_one_is_not() -> None:
    notes = hostmargin.notes([_run("fp8", 16, H100_FP8)], 0.15)
    assert notes and notes[0].startswith("the GPU idled in 3 of the 12 timed FP8 steps")
    assert hostmargin.notes([_run("fp8", 16, STEADY)], 0.15) == []
    assert gpubusy.host_bound([_run("fp8", 16, STEADY)], "fp8") is None


# The H100 trial of 2026-11-28 (16 layers, TE delayed, eager; benchmarks/results/
# h100-2026-11-28/trial_validate_1b_te_delayed.json): the 8-layer FP8 steps idle (8 of 12 under 90%),
# the 16-layer ones 90-100%; the trial's FP8 step came out 8% slower than the real runs'.
H100_28_FP8_8 = [90, 75, 78, 78, 88, 88, 90, 85, 85, 95, 95, 82]
H100_28_FP8_16 = [100, 100, 100, 100, 99, 96, 96, 94, 92, 91, 90, 91]


def test_a_shallower_depth_that_idles_counts() -> None:
    runs = [_run("fp8", 8, H100_28_FP8_8), _run("fp8", 16, H100_28_FP8_16),
            _run("bf16", 16, [100, 100, 97])]
    assert gpubusy.host_bound([_run("fp8", 16, H100_28_FP8_16)], "fp8") is None
    hb = gpubusy.host_bound(runs, "fp8")
    assert hb == gpubusy.HostBound(depth=8, low=8, sampled=12, median=88)
    notes = hostmargin.notes(runs, 0.15)
    assert notes[0].startswith("the GPU was busy only 88% of the FP8 step at 8 layers")
    # the deepest depth that idles is the one named
    deeper = [_run("fp8", 8, [10, 10, 10]), _run("fp8", 16, H100_FP8)]
    assert gpubusy.host_bound(deeper, "fp8") == gpubusy.HostBound(16, 3, 12, 100)


def test_samples_that_are_not_numbers_are_skipped() -> None:
    assert gpubusy.host_bound([_run("fp8", 8, ["x", None])], "fp8") is None  # type: ignore[list-item]
    assert gpubusy.host_bound([{"precision": "fp8", "depth": 8}], "fp8") is None


class _FakeNvml:
    """The two lookups Busy makes, answering for one GPU."""

    def __init__(self, uuid: str) -> None:
        self.uuid, self.by_index = uuid, []

    def nvmlDeviceGetHandleByUUID(self, name: str) -> str:  # noqa: N802 - NVML's name
        if name != self.uuid:
            raise LookupError(name)
        return "handle-by-uuid"

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:  # noqa: N802
        self.by_index.append(index)
        return f"handle-{index}"


def _torch(uuid: str) -> Any:
    props = types.SimpleNamespace(uuid=uuid)
    cuda = types.SimpleNamespace(get_device_properties=lambda device: props)
    return types.SimpleNamespace(cuda=cuda, device=lambda d: types.SimpleNamespace(index=1))


def test_the_gpu_is_found_by_uuid_and_never_by_a_renumbered_index(
        monkeypatch: pytest.MonkeyPatch) -> None:
    nv = _FakeNvml("GPU-1234")
    assert gpubusy.Busy._match(_torch("1234"), nv, "cuda:1") == "handle-by-uuid"
    assert gpubusy.Busy._match(_torch("GPU-1234"), nv, "cuda:1") == "handle-by-uuid"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    assert gpubusy.Busy._match(_torch("other"), nv, "cuda:1") is None   # index 1 is not GPU 1
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert gpubusy.Busy._match(_torch("other"), nv, "cuda:1") == "handle-1"


def test_without_nvml_nothing_is_sampled_and_nothing_raises(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    from preflight.probes import nvml_child

    monkeypatch.setattr(nvml_child, "load", lambda: {"ok": False, "reason": "no NVML"})
    busy = gpubusy.Busy(_torch("x"), "cuda:0")
    busy.sample()
    assert busy.samples == []
