"""Fixtures for tests/cluster: start REAL torchrun jobs of ``python -m preflight.cluster`` on CPU (gloo).

Per-rank differences are planted for real: a wrapper script (run by torchrun with ``--no-python``)
sets an environment variable or puts a directory holding a ``*.dist-info`` on one rank's
PYTHONPATH, so importlib.metadata on that rank really sees another package version.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768      # Linux's default elsewhere; IANA's is 49152


def _free_port() -> int:
    """A TCP port free on 127.0.0.1 now, drawn below the kernel's ephemeral range.

    The port is only used later, by a child: one from ``bind(("", 0))`` is in the ephemeral range,
    where the kernel hands it out again (another test session's bind to 0, an outgoing
    connection's source port) in between, and the child's store fails with "address in use" on
    a machine shared by parallel test runs. Below the range only a bind naming that very port
    takes it: drawn at random from about 10,000, then checked free."""
    low = _ephemeral_low()
    draw = random.SystemRandom()
    for _ in range(100):
        port = draw.randrange(max(1024, low - 10_000), low) if low > 2048 else 0
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(s.getsockname()[1])
    raise RuntimeError("no free TCP port on 127.0.0.1 below the ephemeral range")


def _fake_dist_info(where: Path, name: str, version: str) -> Path:
    """A minimal installed-distribution record that importlib.metadata reads like a real one."""
    info = where / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return where


@dataclass(frozen=True)
class Job:
    """A finished torchrun job: its exit code, output, wall time and rank 0's JSON report."""

    rc: int
    stdout: str
    stderr: str
    seconds: float
    report: dict[str, Any] | None

    def facts(self, prefix: str = "cluster.") -> dict[str, Any]:
        assert self.report is not None, self.stderr[-3000:]
        return {k: v for k, v in self.report["facts"].items() if k.startswith(prefix)}


def _job_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NVTE_", "NCCL_", "ACCELERATE_", "TORCH_NCCL_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = "1"
    env.pop("CUDA_VISIBLE_DEVICES", None)
    return env


@pytest.fixture
def torchrun(tmp_path: Path) -> Callable[..., Job]:
    """Run ``torchrun --nproc-per-node N --no-python bash wrapper.sh ARGS`` and collect the result.

    ``per_rank`` maps a rank to shell lines run before ``exec python -m preflight.cluster`` on it.
    """

    def run(nproc: int, args: Sequence[str] = (), per_rank: Mapping[int, str] | None = None,
            timeout: float = 240) -> Job:
        bash = shutil.which("bash")
        if bash is None:
            pytest.skip("needs bash: torchrun runs each rank's wrapper script with it")
        wrapper = tmp_path / "wrapper.sh"
        lines = ["#!/bin/bash"]
        for rank, shell in (per_rank or {}).items():
            lines.append(f'if [ "$RANK" = "{rank}" ]; then\n{shell}\nfi')
        lines.append(f'exec "{sys.executable}" -W ignore -m preflight.cluster "$@"')
        wrapper.write_text("\n".join(lines) + "\n")
        out = tmp_path / "report.json"
        cmd = [sys.executable, "-W", "ignore", "-m", "torch.distributed.run",
               "--nproc-per-node", str(nproc), "--master-port", str(_free_port()),
               "--no-python", bash, str(wrapper), "--format", "json", "-o", str(out), *args]
        start = time.monotonic()
        proc = subprocess.run(cmd, cwd=tmp_path, env=_job_env(), capture_output=True, text=True,
                              timeout=timeout)
        report = json.loads(out.read_text()) if out.exists() else None
        return Job(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start, report)

    return run


@pytest.fixture
def free_port() -> Callable[[], int]:
    """A TCP port free on 127.0.0.1 right now (for MASTER_PORT)."""
    return _free_port


@pytest.fixture
def fake_dist_info() -> Callable[[Path, str, str], Path]:
    """Write ``<name>-<version>.dist-info`` under a folder; returns the folder (for PYTHONPATH)."""
    return _fake_dist_info


@pytest.fixture
def job_env() -> Callable[[], dict[str, str]]:
    """The environment a test job starts from: no inherited NVTE_/NCCL_/ACCELERATE_ variables."""
    return _job_env


@pytest.fixture
def repo_root() -> Path:
    return ROOT
