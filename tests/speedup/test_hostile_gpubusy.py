"""The trial's GPU-busy sampling against an NVML that answers garbage (issue 21, redteam7): a
utilization NVML cannot give (negative, 2**32-1, over 100, text, a bool, a float) stops the
sampling and is never a sample, so the trial never says "busy only -5%". A fake of the two NVML
calls Busy makes (tests/speedup/test_gpubusy.py does the same for the UUID match)."""

from __future__ import annotations

import types
from typing import Any

import pytest

from preflight.probes import nvml_child
from preflight.speedup import gpubusy, hostmargin
from tests.speedup.test_gpubusy import _run, _torch


class _Nvml:
    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers

    def nvmlInit(self) -> None:  # noqa: N802 - NVML's name
        pass

    def nvmlDeviceGetHandleByUUID(self, name: str) -> str:  # noqa: N802
        return "handle"

    def nvmlDeviceGetUtilizationRates(self, handle: str) -> Any:  # noqa: N802
        return types.SimpleNamespace(gpu=self.answers.pop(0))


@pytest.mark.parametrize("garbage", [-5, 2 ** 32 - 1, 101, "77", True, 3.7, b"9", None])
def test_a_utilization_nvml_cannot_give_is_never_a_sample(monkeypatch: pytest.MonkeyPatch,
                                                          garbage: Any) -> None:
    monkeypatch.setattr(nvml_child, "load", lambda: _Nvml([97, garbage, 12]))
    busy = gpubusy.Busy(_torch("x"), "cuda:0")
    for _ in range(3):
        busy.sample()
    assert busy.samples == [97]             # what came before is kept; nothing after
    assert hostmargin.notes([_run("fp8", 16, busy.samples)], 0.15) == []
