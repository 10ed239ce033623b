"""The srun path (SLURM_* variables, rank 0 hosts the store); the roll call on a real TCPStore."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from preflight.cluster.gather import _roll_call
from preflight.cluster.launch import RankInfo


def test_srun_style_job_compares_ranks_and_exits_with_the_report_code(
        tmp_path: Path, free_port: Callable[[], int], job_env: Callable[[], dict[str, str]],
        repo_root: Path) -> None:
    # Two processes started the way srun starts them: SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID,
    # no RANK / WORLD_SIZE; rank 0 hosts the c10d store.
    port = free_port()
    out = tmp_path / "report.json"
    procs = []
    for rank in range(2):
        env = job_env()
        env.update({"SLURM_PROCID": str(rank), "SLURM_NTASKS": "2", "SLURM_LOCALID": str(rank),
                    "SLURM_JOB_ID": "4242", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
        if rank == 1:
            env["NCCL_ALGO"] = "Ring"
        cmd = [sys.executable, "-W", "ignore", "-m", "preflight.cluster", "--timeout", "40",
               "--format", "json", "-o", str(out), "--fail-on", "warning"]
        procs.append(subprocess.Popen(cmd, cwd=repo_root, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    results = [p.communicate(timeout=80) for p in procs]
    codes = [p.returncode for p in procs]
    assert codes == [1, 0], results
    doc = json.loads(out.read_text())
    assert doc["facts"]["cluster.diff.env"] == [
        {"name": "NCCL_ALGO", "values": {"<unset>": [0], "Ring": [1]}}]
    assert {f["id"] for f in doc["findings"] if f["id"].startswith("FP8D-CLU")} == {"FP8D-CLU-0005"}


def test_roll_call_tells_a_hung_rank_from_one_never_seen(free_port: Callable[[], int]) -> None:
    import torch.distributed as dist

    store = dist.TCPStore("127.0.0.1", free_port(), is_master=True,
                          timeout=timedelta(seconds=10), wait_for_workers=False)
    info = RankInfo(0, 3, 0, "torchrun", "127.0.0.1", 0, "t", "h")
    for key in ("alive/0", "ready/0", "alive/1"):  # rank 1 started and hangs; rank 2 never came
        store.set(f"fp8d/t/{key}", "1")
    store.add("fp8d/t/ready_count", 1)
    start = time.monotonic()
    present, missing = _roll_call(store, info, deadline=time.monotonic() + 0.5)
    assert 0.5 <= time.monotonic() - start < 30   # its deadline, with room for a loaded machine
    assert present == [0]
    assert "started but did not finish" in missing[1]
    assert "never reached the rendezvous" in missing[2]
    assert json.loads(store.get("fp8d/t/roster")) == [0]


def test_srun_rank_that_never_starts_is_named_in_rank_0s_report(
        tmp_path: Path, free_port: Callable[[], int], job_env: Callable[[], dict[str, str]],
        repo_root: Path) -> None:
    # issue 13 item 4: under srun rank 0 hosts the store and used to wait there for every rank to
    # connect, ending in "internal error: DistStoreError" and no report when one never started.
    # Under torchrun the same rank is named; now under srun too.
    env = job_env()
    env.update({"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_LOCALID": "0",
                "SLURM_JOB_ID": "4243", "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": str(free_port())})
    out = tmp_path / "report.json"
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-W", "ignore", "-m", "preflight.cluster",
                           "--timeout", "8", "--format", "json", "-o", str(out)],
                          cwd=repo_root, env=env, capture_output=True, text=True, timeout=240)
    assert time.monotonic() - start < 150   # --timeout 8 and start-up on a loaded machine
    assert "internal error" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 1, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["facts"]["cluster.world_size"] == 2
    assert doc["facts"]["cluster.missing_ranks"] == [1]
    [entry] = doc["facts"]["cluster.missing"]
    assert entry["rank"] == 1 and "never reached the rendezvous" in entry["reason"]
