"""benchmarks/device_final.sh (the one final GPU call) and benchmarks/gpu_check.py's comparison,
as far as they can be checked without a GPU: the plan in order, a step skipped when too little
time is left (nothing run), the summary written, shellcheck where it is installed."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "device_final.sh"
STEPS = ["wheels", "old", "te", "versions", "a", "b", "c", "d"]
bash = shutil.which("bash")
pytestmark = pytest.mark.skipif(bash is None or shutil.which("timeout") is None,
                                reason="needs bash and coreutils timeout")


def _run(out: Path, *args: str, budget: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "BUDGET_S"}
    if budget:
        env["BUDGET_S"] = budget
    return subprocess.run([str(bash), str(SCRIPT), str(out), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_dry_run_prints_every_step_in_order_and_runs_none(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _run(out, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    named = [line.split()[0] for line in proc.stdout.splitlines()
             if line[:1].isalpha() and " needs " in line]
    assert named == STEPS
    assert "gpu_check.py" in proc.stdout and "-n 3" in proc.stdout and "--old /tmp/old" in proc.stdout
    assert "te:delayed" in proc.stdout and "te:current" in proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dry_run"] is True and [s["step"] for s in summary["steps"]] == STEPS
    assert sorted(p.name for p in out.iterdir()) == ["summary.json"]


def test_a_step_never_starts_without_the_time_it_needs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _run(out, budget="5")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert [s["step"] for s in summary["steps"]] == STEPS
    assert all(s["status"].startswith("skipped") for s in summary["steps"])
    assert not (out / "gpu_check.json").exists()
    # every file it leaves is one the device tool brings back (8 at most, plain names)
    assert len(list(out.iterdir())) <= 8


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_shellcheck_is_clean() -> None:
    proc = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout


def _gpu_check() -> Any:
    spec = importlib.util.spec_from_file_location("gpu_check", REPO / "benchmarks" / "gpu_check.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_check"] = module
    spec.loader.exec_module(module)
    return module


def test_smoke_verdicts_and_findings_are_compared_apart() -> None:
    gc = _gpu_check()
    smoke = {"smoke.status": "ok", "smoke.te.resume_status": "refused"}

    def run(wall: float, findings: list[str], **extra: Any) -> dict[str, Any]:
        return {"wall_s": wall, "verdict": {"findings": findings, "exit_code": 1, **smoke,
                                            "children": {"te": wall}, **extra}}

    doc: dict[str, Any] = {"runs": {
        "old check --example": [run(12.0, ["FP8D-A"])],
        "new check --example": [run(6.0, ["FP8D-A", "FP8D-NEW"]),
                                run(7.0, ["FP8D-A", "FP8D-NEW"])]}}
    gc.summarize(doc)
    assert doc["smoke_verdicts_identical_to_old"] is True      # timings differ: not compared
    assert doc["findings_identical_to_old"] is False           # a rule merged since
    assert doc["summary"]["new check --example"]["median_s"] == 6.5
    doc["runs"]["new check --example"].append(
        run(6.0, ["FP8D-A"], **{"smoke.te.resume_status": "restored"}))
    gc.summarize(doc)
    assert doc["smoke_verdicts_identical_to_old"] is False
