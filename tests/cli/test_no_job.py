"""Issue 24 item 1, "no green without a job": ``fp8-doctor check`` with no argument in a folder
with no job config and no accelerate default config judged this machine only, yet printed the
green "[✓] Findings: no known problem matched" and exited 0, while ``check .`` in the same
folder gave the error FP8D-CFG-NO-JOB.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # A HOME without ~/.cache/huggingface/accelerate/default_config.yaml: no default job.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "PYTHONPATH": str(ROOT),
           "HF_HOME": str(folder / "hf"), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "preflight", "check", "--no-project-config",
                           *args], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture()
def empty(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def test_a_bare_check_in_an_empty_folder_is_not_green(empty: Path) -> None:
    out = _run(empty)
    assert out.returncode == 0, out.stderr   # a machine-only check may pass ...
    assert "no known problem" not in out.stdout and "[✓]" not in out.stdout   # no green mark
    assert "FP8D-CFG-NO-JOB" in out.stdout   # ... but says that no job was judged
    assert "no job read" in out.stdout                  # the summary line says it too


def test_its_json_says_job_read_false_with_the_finding(empty: Path) -> None:
    doc = json.loads(_run(empty, "--format", "json").stdout)
    assert doc["job_read"] is False
    [finding] = [f for f in doc["findings"] if f["id"] == "FP8D-CFG-NO-JOB"]
    assert finding["severity"] == "info"


def test_strict_fails_it(empty: Path) -> None:
    out = _run(empty, "--strict", "--format", "json")
    assert out.returncode == 1
    [finding] = [f for f in json.loads(out.stdout)["findings"] if f["id"] == "FP8D-CFG-NO-JOB"]
    assert finding["severity"] == "error"


def test_consistent_with_check_dot(empty: Path) -> None:
    out = _run(empty, ".", "--format", "json")
    doc = json.loads(out.stdout)
    assert out.returncode == 1 and doc["job_read"] is False
    assert [f["severity"] for f in doc["findings"] if f["id"] == "FP8D-CFG-NO-JOB"] == ["error"]


def test_ignoring_the_finding_still_shows_no_green_mark(empty: Path) -> None:
    out = _run(empty, "--ignore", "FP8D-CFG-NO-JOB")
    assert out.returncode == 0 and "[✓] Findings" not in out.stdout
    assert "no job was read" in out.stdout


def test_a_job_read_says_so(tmp_path: Path) -> None:
    job = ROOT / "preflight" / "examples"
    doc = json.loads(_run(tmp_path, str(job), "--format", "json").stdout)
    assert doc["job_read"] is True and "FP8D-CFG-NO-JOB" not in {f["id"] for f in doc["findings"]}
