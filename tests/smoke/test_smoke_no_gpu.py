"""On a machine without a usable CUDA GPU the smoke step is *skipped* with a reason, not reported
as a crash (FP8D-SMOKE-0001), unless the probes did see GPUs that torch then cannot use.

These run the real pipeline and the real smoke child, and only where torch has no CUDA device.
"""

from __future__ import annotations

import json

import pytest

import preflight
from preflight.facts import Unknown
from preflight.smoke import SmokeOptions, run

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")


def test_assert_ready_with_its_default_smoke_does_not_crash_without_a_gpu() -> None:
    report = preflight.assert_ready(smoke=True)  # raised FP8D-SMOKE-0001 before
    assert report.facts["smoke.ran"] is False
    assert "--device cpu" in report.facts["smoke.skip_reason"]
    assert "FP8D-SMOKE-0001" not in {f.rule_id for f in report.findings}


def test_the_cpu_device_still_runs_when_asked_for() -> None:
    report = preflight.check(smoke=True, smoke_options=SmokeOptions(device="cpu", timeout=120,
                                                                    backends=("scaled_mm",)))
    assert report.facts["smoke.ran"] is True and report.facts["smoke.status"] == "ok"


def test_child_without_cuda_is_a_skip_when_no_gpu_is_on_record() -> None:
    out = run({"gpu.count": Unknown("no NVML")}, SmokeOptions(device="cuda", timeout=120))
    assert out.facts["smoke.ran"] is False
    assert "is_available() is False" in out.facts["smoke.skip_reason"]
    assert out.details["status"] == "skipped"


def test_child_without_cuda_is_a_crash_when_the_probes_saw_gpus() -> None:
    """NVML sees 8 GPUs but torch cannot use them: that is a real problem, still reported."""
    out = run({"gpu.count": 8}, SmokeOptions(device="cuda", timeout=120))
    assert out.facts["smoke.status"] == "crash"


def test_smoke_command_on_cuda_says_skipped_exits_0_and_1_under_strict(capsys) -> None:
    """Skipped is not failed (exit 0, with the reason and the --device cpu hint); --strict makes
    a step that could not run a failure (exit 1)."""
    from preflight import cli

    assert cli.main(["smoke", "--timeout", "120"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("fp8-doctor smoke: skipped: no CUDA device here") and "--device cpu" in out
    assert "--strict" in out
    assert cli.main(["smoke", "--timeout", "120", "--strict", "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["exit_code"] == 1
