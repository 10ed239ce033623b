"""When the smoke step runs by default, and that deciding never imports torch."""

from __future__ import annotations

import subprocess
import sys

import pytest

from preflight.facts import Facts, Unknown
from preflight.smoke import should_run

H100 = {"gpu.min_cc": "9.0", "pkg.torch.version": "2.11.0"}


@pytest.mark.parametrize(("facts", "requested", "want"), [
    (H100, None, True),
    ({**H100, "gpu.min_cc": "8.9"}, None, True),
    ({**H100, "gpu.min_cc": "10.0"}, None, True),          # "10.0" > "8.9" as a tuple, not a string
    ({**H100, "gpu.min_cc": "8.6"}, None, False),
    ({**H100, "gpu.min_cc": "sm_90"}, None, True),         # one cc parser for every fact reader
    ({**H100, "gpu.min_cc": "90"}, None, True),
    ({**H100, "gpu.min_cc": "sm_86"}, None, False),
    ({"gpu.min_cc": "9.0"}, None, False),                  # no torch
    ({"gpu.min_cc": Unknown("no NVML"), "pkg.torch.version": "2.11.0"}, None, False),
    ({}, None, False),
    (H100, False, False),
    ({}, True, True),
])
def test_should_run(facts: dict, requested: bool | None, want: bool) -> None:
    ok, reason = should_run(facts, requested)
    assert ok is want and reason


@pytest.mark.parametrize("source", ["snapshot", "assume"])
def test_gpu_from_elsewhere_does_not_trigger_the_smoke_step(source: str) -> None:
    facts = Facts(H100, {"gpu.min_cc": source, "pkg.torch.version": "importlib.metadata"})
    ok, reason = should_run(facts, None)
    assert ok is False and source in reason
    assert should_run(Facts(H100, {"gpu.min_cc": "nvml"}), None)[0] is True
    assert should_run(facts, True)[0] is True     # --smoke still forces it


def test_reason_names_the_missing_piece() -> None:
    assert "8.6" in should_run({**H100, "gpu.min_cc": "8.6"}, None)[1]
    assert "torch" in should_run({"gpu.min_cc": "9.0"}, None)[1]


def test_deciding_does_not_import_torch() -> None:
    code = ("import sys; from preflight.smoke import should_run, SmokeOptions; "
            "should_run({'gpu.min_cc': '9.0', 'pkg.torch.version': '2.11'}, None); "
            "import preflight.commands.smoke, preflight.smoke.outcome, preflight.smoke.runner; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


CPU_TORCH = {"pkg.torch.version": "2.13.0+cpu", "cuda.torch_variant": "cpu"}


@pytest.mark.parametrize(("facts", "requested", "device", "want", "says"), [
    # Requested, but this machine cannot run a CUDA smoke step: skipped with the reason.
    (CPU_TORCH, True, "cuda", False, "CPU-only build"),
    ({**H100, **CPU_TORCH}, None, "cuda", False, "CPU-only build"),  # GPU host, CPU torch
    ({"gpu.count": 0, "pkg.torch.version": "2.11.0"}, True, "cuda", False, "no GPU"),
    # The CPU device runs anywhere; a GPU on record runs as before.
    (CPU_TORCH, True, "cpu", True, "requested"),
    ({"gpu.count": 8, "cuda.torch_variant": "cuda"}, True, "cuda", True, "requested"),
    ({"gpu.count": Unknown("no NVML")}, True, "cuda", True, "requested"),
])
def test_no_cuda_here_skips_instead_of_crashing(facts: dict, requested: bool | None, device: str,
                                                want: bool, says: str) -> None:
    ok, reason = should_run(facts, requested, device)
    assert ok is want and says in reason
    if not ok:
        assert "--device cpu" in reason


def test_facts_from_elsewhere_do_not_skip_a_requested_run() -> None:
    facts = Facts({"gpu.count": 0, **CPU_TORCH},
                  {"gpu.count": "snapshot", "cuda.torch_variant": "snapshot"})
    assert should_run(facts, True)[0] is True


@pytest.mark.parametrize("requested", [None, True])
def test_macos_says_why_the_cuda_smoke_step_cannot_run(monkeypatch: pytest.MonkeyPatch,
                                                       requested: bool | None) -> None:
    # issue 12 item 7: simulated (CI is Linux). The static checks still run; the smoke step is
    # skipped with the platform as the reason, even when asked for, while --device cpu runs.
    import preflight.smoke as smoke

    monkeypatch.setattr(smoke.sys, "platform", "darwin")
    run, why = should_run(H100, requested)
    assert not run and "macOS has no CUDA" in why
    assert should_run(H100, True, device="cpu") == (True, "requested")
