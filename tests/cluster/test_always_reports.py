"""The multi-rank mode always reports (issue 21 item 7): real jobs over gloo on the CPU.

A rank that exits before the rendezvous, dies after announcing itself, floods (a 200 MB payload,
a fact of 2,000,000 items), lies (another rank's number, values of the wrong type) or dies in the
middle of the exchange is a row of rank 0's report, and rank 0 exits by the findings (never 3 for
a peer's fault). Hostile ranks run fp8-doctor with one of its own functions replaced (a fake of our
own interface: what a broken or modified rank would send); every other rank is the real thing.
Each job waits on events, not on time: a rank that must die after rank 0 is up waits for rank 0's
key on the job's store first. Timeouts are generous bounds, never what a test measures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

Job = Any  # tests/cluster/conftest.py: Job

HOSTILE = '''
import json, os, sys
import preflight.cluster.collect as collect
import preflight.cluster.gather as gather
from preflight import _startup

MODE = {mode!r}
_collect = collect.collect_rank
_announce = gather.announce
_mask = gather.shared_mask_key


def collect_rank(info, options, **kw):
    payload, local = _collect(info, options, **kw)
    if MODE == "huge-list":   # honest code, a huge fact: the sender caps it
        payload["facts"]["pkg.transformer-engine.version"] = list(range(2_000_000))
    if MODE == "die-after-announce":
        os._exit(1)
    return payload, local


def announce(store, info):
    if MODE == "exit-before-rendezvous":   # never announces; leaves once rank 0 is up
        store.wait([f"fp8d/{{info.run_id}}/mask_key"])
        os._exit(1)
    _announce(store, info)


def send_payloads(data, **kw):
    os._exit(1)   # on the roster, then gone in the middle of the exchange


collect.collect_rank = collect_rank
gather.announce = announce
if MODE == "flood":      # ignores the cap
    gather.encode = lambda payload: b" " * (200 * 1024 * 1024)
if MODE == "lie":        # says it is rank 0, with facts that are not a mapping
    gather.encode = lambda payload: json.dumps(dict(payload, rank=0, facts="x")).encode()
if MODE == "die-in-exchange":
    gather.send_payloads = send_payloads
_startup.run_module("python -m preflight.cluster", "preflight.cluster.cli")
'''


def _hostile(tmp_path: Path, mode: str) -> str:
    """Shell lines that run this rank as a hostile rank of the given mode."""
    script = tmp_path / f"hostile-{mode}.py"
    script.write_text(HOSTILE.format(mode=mode))
    return f'exec "{sys.executable}" -W ignore "{script}" "$@"'


def _clean(stderr: str) -> bool:
    """No internal error or traceback of ours (torchrun prints its own ChildFailedError one)."""
    return ("internal error" not in stderr and "KeyboardInterrupt" not in stderr
            and stderr.count("Traceback (most recent") <= stderr.count("errors.ChildFailedError"))


def _rows(job: Job) -> dict[int, str]:
    return {m["rank"]: m["reason"] for m in job.facts()["cluster.missing"]}


def test_flooding_and_lying_ranks_are_rows_and_the_rest_is_compared(
        torchrun: Callable[..., Job], tmp_path: Path) -> None:
    job = torchrun(4, ["--timeout", "90"], per_rank={
        1: _hostile(tmp_path, "flood"), 2: _hostile(tmp_path, "lie"),
        3: _hostile(tmp_path, "huge-list")}, timeout=240)
    assert job.report is not None, job.stderr[-3000:]
    rows = _rows(job)
    assert "announced 209,715,200 bytes" in rows[1]
    assert "said it was rank 0" in rows[2]
    facts = job.facts()
    assert facts["cluster.missing_ranks"] == [1, 2] and facts["cluster.ranks_answered"] == 2
    # rank 3's 2,000,000-item fact reached rank 0 as Unknown, not as 2,000,000 items
    [te] = [d for d in facts["cluster.diff.packages"] if d["name"] == "transformer-engine"]
    assert te["values"] == {"<absent>": [0], "<unknown>": [3]}
    assert job.report["exit_code"] == 1
    assert _clean(job.stderr), job.stderr[-3000:]


def test_a_rank_that_exits_before_the_rendezvous_is_a_row(
        torchrun: Callable[..., Job], tmp_path: Path) -> None:
    # torchrun stops every rank (SIGTERM) when one fails: rank 0 reports what it has.
    job = torchrun(3, ["--timeout", "90"], per_rank={
        1: _hostile(tmp_path, "exit-before-rendezvous")}, timeout=240)
    assert job.report is not None, job.stderr[-3000:]
    rows = _rows(job)
    assert "never reached the rendezvous" in rows[1] and "SIGTERM" in rows[1]
    assert job.report["exit_code"] == 1
    assert _clean(job.stderr), job.stderr[-3000:]


def test_a_rank_that_dies_after_announcing_itself_is_a_row(
        torchrun: Callable[..., Job], tmp_path: Path) -> None:
    job = torchrun(2, ["--timeout", "90"], per_rank={
        1: _hostile(tmp_path, "die-after-announce")}, timeout=240)
    assert job.report is not None, job.stderr[-3000:]
    assert "started but did not finish" in _rows(job)[1]
    assert job.report["exit_code"] == 1
    assert _clean(job.stderr), job.stderr[-3000:]


def _srun(rank: int, ntasks: int, port: int, env: dict[str, str], repo: Path,
          args: list[str], **kw: Any) -> subprocess.Popen[str]:
    env = dict(env, SLURM_PROCID=str(rank), SLURM_NTASKS=str(ntasks), SLURM_LOCALID=str(rank),
               SLURM_JOB_ID="4321", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    return subprocess.Popen([sys.executable, "-W", "ignore", *args], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def test_a_rank_that_dies_in_the_middle_of_the_exchange_is_a_row(
        tmp_path: Path, free_port: Callable[[], int], job_env: Callable[[], dict[str, str]],
        repo_root: Path) -> None:
    # srun-style: nothing stops rank 0 when rank 1 dies, so rank 0's own bounds must hold.
    port, out = free_port(), tmp_path / "report.json"
    args = ["--timeout", "90", "--format", "json", "-o", str(out)]
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE.format(mode="die-in-exchange"))
    procs = [_srun(0, 2, port, job_env(), repo_root, ["-m", "preflight.cluster", *args]),
             _srun(1, 2, port, job_env(), repo_root, [str(script), *args])]
    results = [p.communicate(timeout=240) for p in procs]
    assert procs[0].returncode == 1, results[0][1][-3000:]
    doc = json.loads(out.read_text())
    [row] = doc["facts"]["cluster.missing"]
    assert row["rank"] == 1 and "exchange with rank 0 failed" in row["reason"]
    assert "internal error" not in results[0][1] and "Traceback" not in results[0][1]


def test_srun_variables_are_usage_errors_naming_the_variable(
        job_env: Callable[[], dict[str, str]], repo_root: Path) -> None:
    for name, value in (("SLURM_PROCID", "x"), ("SLURM_NTASKS", "200000"),
                        ("SLURM_NTASKS", "-3"), ("SLURM_PROCID", "7")):
        env = dict(job_env(), SLURM_PROCID="0", SLURM_NTASKS="4", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT="1")
        env[name] = value
        proc = subprocess.run([sys.executable, "-W", "ignore", "-m", "preflight.cluster"],
                              cwd=repo_root, env=env, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 2, (name, value, proc.stderr[-2000:])
        assert name in proc.stderr and "Traceback" not in proc.stderr


def test_a_rank_too_late_for_rank_0_is_named_and_itself_ends_cleanly(
        tmp_path: Path, free_port: Callable[[], int], job_env: Callable[[], dict[str, str]],
        repo_root: Path) -> None:
    # Rank 1 starts only once rank 0 has reported and gone (with it the store it hosted).
    port, out = free_port(), tmp_path / "report.json"
    args = ["-m", "preflight.cluster", "--format", "json", "-o", str(out)]
    first = _srun(0, 2, port, job_env(), repo_root, [*args, "--timeout", "5"])
    _out, err0 = first.communicate(timeout=240)
    assert first.returncode == 1, err0[-3000:]
    assert json.loads(out.read_text())["facts"]["cluster.missing_ranks"] == [1]
    late = _srun(1, 2, port, job_env(), repo_root, [*args, "--timeout", "5"])
    _out, err1 = late.communicate(timeout=240)
    assert late.returncode == 1, err1[-3000:]
    assert "could not reach rank 0's store" in err1
    assert "internal error" not in err1 and "Traceback" not in err1
    assert os.path.exists(out)   # rank 1 wrote nothing over rank 0's report
