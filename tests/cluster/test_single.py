"""``python -m preflight.cluster`` without a launcher, usage errors, the collectives child off-GPU."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from preflight.cluster.collectives import _child


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-W", "ignore", "-m", "preflight.cluster", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=240)


def test_without_a_launcher_it_is_a_job_of_one(job_env: Callable[[], dict[str, str]],
                                               repo_root: Path) -> None:
    proc = _run(["--format", "json"], job_env(), repo_root)
    doc = json.loads(proc.stdout)
    assert proc.returncode == doc["exit_code"]
    assert doc["facts"]["cluster.world_size"] == 1
    assert doc["facts"]["cluster.differing"] == []
    assert [r["rank"] for r in doc["cluster"]["ranks"]] == [0]


def _no_launcher(env: dict[str, str]) -> dict[str, str]:
    drop = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "SLURM_PROCID",
            "SLURM_NTASKS")
    return {k: v for k, v in env.items() if k not in drop}


def test_collectives_in_a_job_of_one_run_on_the_one_rank(
        job_env: Callable[[], dict[str, str]], repo_root: Path) -> None:
    # No launcher: no store listens on MASTER_PORT. The collectives child used to connect to one
    # anyway and failed after its timeout (FP8D-CLU-0009 with a traceback in the message).
    # --timeout 120: a run that waited for the store takes that long, far over a loaded
    # machine's start-up and one-rank collectives.
    start = time.monotonic()
    proc = _run(["--collectives", "--collectives-backend", "gloo", "--collectives-mib", "1",
                 "--timeout", "120", "--format", "json"], _no_launcher(job_env()), repo_root)
    seconds = time.monotonic() - start
    doc = json.loads(proc.stdout)
    facts = doc["facts"]
    assert facts["cluster.collectives.status"] == "ok", facts.get("cluster.collectives.error")
    assert facts["cluster.collectives.all_reduce.ok"] is True
    assert facts["cluster.collectives.all_gather_uint8.ok"] is True
    # One rank moves nothing over a link: bus bandwidth 0 (nccl-tests' convention).
    assert facts["cluster.collectives.all_reduce.busbw_gbps"] == 0
    assert "FP8D-CLU-0009" not in {f["id"] for f in doc["findings"]}
    assert seconds < 120, f"{seconds:.1f}s: it waited for a store that does not exist"


def test_usage_errors_exit_2_with_a_message(job_env: Callable[[], dict[str, str]],
                                            repo_root: Path) -> None:
    proc = _run(["/no/such/job.yaml"], job_env(), repo_root)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "no such file or folder: /no/such/job.yaml" in proc.stderr
    env = dict(job_env(), RANK="3", WORLD_SIZE="2")
    proc = _run([], env, repo_root)
    assert proc.returncode == 2 and "RANK=3 is outside WORLD_SIZE=2" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = _run(["-o", "/no/such/dir/report.json"], job_env(), repo_root)
    assert proc.returncode == 2 and "cannot write /no/such/dir/report.json" in proc.stderr


@pytest.mark.parametrize("flag, value, says", [
    ("--timeout", "nan", "must be a finite number of seconds above 0"),
    ("--timeout", "-5", "must be a finite number of seconds above 0"),
    ("--timeout", "0", "must be a finite number of seconds above 0"),
    ("--timeout", "inf", "must be a finite number of seconds above 0"),
    ("--timeout", "1e9", "must be at most 604800 seconds"),
    ("--timeout", "soon", "not a number of seconds"),
    ("--smoke-timeout", "inf", "must be a finite number of seconds above 0"),
    ("--smoke-timeout", "1e9", "must be at most 604800 seconds"),
    ("--collectives-mib", "0", "must be at least 1 MiB"),
    ("--collectives-mib", "-1", "must be at least 1 MiB"),
    ("--collectives-mib", "1.5", "not a whole number of MiB"),
])
def test_bad_numbers_are_usage_errors(flag: str, value: str, says: str,
                                      job_env: Callable[[], dict[str, str]],
                                      repo_root: Path) -> None:
    # argparse rejects them before any probe runs: exit 2, one message, no traceback. (inf used
    # to pass and end in an OverflowError, exit 3, once a timedelta was built from it.)
    proc = _run([flag, value], _no_launcher(job_env()), repo_root)
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"argument {flag}: {says}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_nccl_collectives_without_a_gpu_are_skipped_not_failed() -> None:
    import torch

    if torch.cuda.is_available():  # pragma: no cover - CI has no GPU
        pytest.skip("a GPU is visible; this test is about machines without one")
    result = _child({"backend": "nccl", "rank": 0, "world_size": 1, "local_rank": 0,
                     "timeout": 5, "addr": "127.0.0.1", "port": 1, "prefix": "x", "mib": 1})
    assert result["status"] == "skipped" and "no CUDA device" in result["error"]


def test_smoke_pair_is_the_same_as_checks(job_env: Callable[[], dict[str, str]],
                                          repo_root: Path) -> None:
    # issue 14: `--no-smoke` exists as in `fp8-doctor check`, and the pair is exclusive.
    from preflight.cluster.cli import build_parser

    parser = build_parser()
    assert parser.parse_args([]).smoke is False
    assert parser.parse_args(["--smoke"]).smoke is True
    assert parser.parse_args(["--no-smoke"]).smoke is False
    proc = _run(["--smoke", "--no-smoke"], _no_launcher(job_env()), repo_root)
    assert proc.returncode == 2 and "--no-smoke" in proc.stderr and proc.stdout == ""


def test_the_old_module_name_still_runs_and_says_it_is_deprecated(
        job_env: Callable[[], dict[str, str]], repo_root: Path) -> None:
    proc = subprocess.run([sys.executable, "-W", "ignore", "-m", "preflight.dist", "--no-smoke",
                           "--format", "json"], cwd=repo_root, env=_no_launcher(job_env()),
                          capture_output=True, text=True, timeout=60)
    doc = json.loads(proc.stdout)
    assert proc.returncode == doc["exit_code"]
    assert doc["facts"]["cluster.world_size"] == 1
    assert "preflight.cluster" in proc.stderr and "deprecated" in proc.stderr
