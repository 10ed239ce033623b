"""FP8D-PRIME-0001 / -0002 end to end on prime-rl launch lines (read, derive, evaluate): FP8
weight transfer without ``trainer.model.impl = "custom"`` (the shipped GLM-5 example is quiet,
the same config with impl left at its default or hf fires, at the line that asks for the
transfer) and trainer FP8 with the HF implementation."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from preflight import api

JOBS = Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs"
GLM5 = JOBS / "holdout14-prime-rl-glm5-swe-pd-disagg-fp8-checkpoint-rollout-bf16-train" / "files"
TOML = "examples/advanced/glm-5.2/swe.toml"


def _fired(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, rule: str) -> list[str]:
    job = tmp_path / "job"
    shutil.copytree(GLM5, job)
    (job / ".git").mkdir()
    (job / "run.sh").write_text(f"#!/bin/bash\n{line}\n")
    monkeypatch.chdir(job)
    report = api.check(["run.sh"], assume={"gpu": "H200", "pkg.torch": "2.11.0",
                                           "pkg.vllm": "0.26.0"})
    return [str(f.location) for f in report.findings if f.rule_id == rule]


@pytest.mark.parametrize("extra, fires", [
    ("", False),                                   # impl = "custom" (swe.toml:44)
    ("--trainer.model.impl auto", True),
    ("--trainer.model.impl hf", True),
    ("--no-weight-broadcast.quantize-in-weight-transfer --trainer.model.impl hf", False),
])
def test_fp8_transfer_needs_the_custom_impl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            extra: str, fires: bool) -> None:
    hits = _fired(tmp_path, monkeypatch, f"uv run rl @ {TOML} {extra}", "FP8D-PRIME-0001")
    assert bool(hits) is fires
    if fires:
        assert hits[0].endswith("swe.toml:14")


@pytest.mark.parametrize("extra, fires", [
    ("--trainer.model.quantization --trainer.model.impl hf", True),
    ("--trainer.model.quantization", False),                      # impl = "custom"
    ("--trainer.model.impl hf", False),                            # BF16
])
def test_trainer_fp8_needs_a_prime_impl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        extra: str, fires: bool) -> None:
    line = f"uv run rl @ {TOML} --no-weight-broadcast.quantize-in-weight-transfer {extra}"
    hits = _fired(tmp_path, monkeypatch, line, "FP8D-PRIME-0002")
    assert bool(hits) is fires
