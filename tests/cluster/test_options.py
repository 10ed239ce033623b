"""The multi-rank mode decides a run as ``fp8-doctor check`` does (issue 25 item 1): its options
come from ``commands.args.options_from``, so ``[tool.fp8-doctor]``, ``--baseline``, ``--ignore``
and ``--strict`` apply. Real torchrun jobs of two ranks over gloo on the CPU."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from preflight import cli
from preflight.cluster.cli import _options, build_parser
from preflight.examples import example_paths

Job = Any  # tests/cluster/conftest.py: Job
pytestmark = pytest.mark.slow


def _job(tmp_path: Path) -> Path:
    """The bundled example job (ACC-0003, DS-0002 and TORCH-0003 on a CPU-only torch), copied
    where the test's pyproject.toml is the nearest one."""
    job = tmp_path / "job"
    job.mkdir()
    for path in example_paths():
        shutil.copy(path, job)
    shutil.copy(Path(example_paths()[0]).with_name("ds_zero3_fp16.json"), job)
    return job


def _ids(job: Job) -> set[str]:
    assert job.report is not None, job.stderr[-3000:]
    return {f["id"] for f in job.report["findings"]}


def test_project_config_decides_ignore_strict_and_fail_on(
        torchrun: Callable[..., Job], tmp_path: Path) -> None:
    job_dir = _job(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.fp8-doctor]\nignore = ["FP8D-TORCH-0003"]\nstrict = true\nfail-on = "warning"\n')
    job = torchrun(2, [str(job_dir), "--timeout", "60"])
    assert job.report is not None, job.stderr[-3000:]
    assert job.report["facts"]["cluster.world_size"] == 2
    ids = _ids(job)
    assert "FP8D-TORCH-0003" not in ids and job.report["ignored"] == ["FP8D-TORCH-0003"]
    assert job.report["strict"] is True and "FP8D-STRICT-UNDETERMINED" in ids
    assert job.report["fail_on"] == "warning" and job.rc == job.report["exit_code"] == 1

    # --no-project-config: the file is not read, the command line's (none) decides.
    plain = torchrun(2, [str(job_dir), "--timeout", "60", "--no-project-config"])
    assert "FP8D-TORCH-0003" in _ids(plain) and plain.report is not None
    assert plain.report["ignored"] == [] and plain.report["strict"] is False
    assert "FP8D-STRICT-UNDETERMINED" not in _ids(plain)


def test_baseline_and_ignore_flags_apply_on_rank_0(
        torchrun: Callable[..., Job], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    job_dir = _job(tmp_path)
    baseline = tmp_path / "accepted.json"
    monkeypatch.chdir(tmp_path)
    # The baseline `fp8-doctor check` writes for this job is accepted by the multi-rank mode.
    assert cli.main(["check", str(job_dir), "--no-smoke", "--write-baseline", str(baseline),
                     "-o", str(tmp_path / "check.txt")]) == 0
    job = torchrun(2, [str(job_dir), "--timeout", "60", "--baseline", str(baseline),
                       "--ignore", "FP8D-HW-0001", "--strict"])
    assert job.report is not None, job.stderr[-3000:]
    baselined = {f["id"] for f in job.report["baselined"]}
    assert {"FP8D-ACC-0003", "FP8D-DS-0002"} <= baselined
    assert not baselined & _ids(job)
    assert job.report["ignored"] == ["FP8D-HW-0001"]
    assert "FP8D-HW-0001" not in {u["id"] for u in job.report["undetermined"]}
    assert job.report["strict"] is True and job.rc == job.report["exit_code"]


def test_the_cluster_parser_gives_every_option_options_from_reads(tmp_path: Path) -> None:
    job_dir = _job(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.fp8-doctor]\nassume = {gpu = "H100"}\n')
    options = _options(build_parser().parse_args([str(job_dir), "--ignore", "FP8D-HW-0001"]))
    assert options.ignore == ("FP8D-HW-0001",) and options.assume == {"gpu": "H100"}
    assert options.fail_on == "error" and options.strict is False and options.smoke is False
    assert options.paths == (str(job_dir),) and options.bundled_rules
