"""verl launch lines from a hostile pull request (redteam2, issue 21): ``--config-path`` /
``--config-name`` that leave the job (``/etc``, ``../``, ``~``, ``/proc/self``), a config folder
whose files are a symlink out of the job, ``/dev/zero`` or a FIFO, and a defaults chain with a
cycle. Each is a finding naming the script or config and its line; nothing outside the job, no
device and no FIFO is opened; a cycle is not blamed on NeMo-RL (the shared chain loader said
"NeMo-RL would recurse" for a verl Hydra chain)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

_RECORDING: list[list[str]] = []


def _hook(event: str, args: tuple[object, ...]) -> None:
    if _RECORDING and event == "open" and isinstance(args[0], str):
        _RECORDING[-1].append(args[0])


@pytest.fixture()
def opened() -> Iterator[list[str]]:
    """Paths opened while the test runs (Python's own audit hook, added once: it cannot be
    removed, so it records only while a test holds a list)."""
    if not _RECORDING and not getattr(sys, "_fp8d_verl_hook", False):
        sys.addaudithook(_hook)
        sys._fp8d_verl_hook = True  # type: ignore[attr-defined]
    seen: list[str] = []
    _RECORDING.append(seen)
    yield seen
    _RECORDING.remove(seen)


@pytest.fixture()
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.yaml").write_text("actor_rollout_ref:\n  key: SECRET\n")
    job = tmp_path / "job"
    (job / "config").mkdir(parents=True)
    monkeypatch.chdir(job)
    return tmp_path


def _script(job: Path, line: str) -> str:
    path = job / "run.sh"
    path.write_text(f"#!/bin/bash\nset -e\n{line}\n")
    return str(path)


@pytest.mark.parametrize("flags", [
    "--config-path /etc --config-name passwd",
    "--config-path=../outside --config-name=x",
    "--config-path config --config-name ../../../outside/x",
    "--config-dir ~ --config-name .bashrc",
    "-cp /proc/self -cn environ",
    "--config-path /dev --config-name zero",
])
def test_config_flags_that_leave_the_job_open_nothing_outside(world: Path, flags: str,
                                                              opened: list[str]) -> None:
    script = _script(world / "job", f"python3 -m verl.trainer.main_ppo {flags} "
                                    "actor_rollout_ref.actor.strategy=megatron")
    read = read_paths([script])
    outside = [p for p in opened if not os.path.realpath(p).startswith(str(world / "job")) and
               p.startswith(("/etc", "/proc/self/environ", "/dev/zero", str(world / "outside")))]
    assert outside == []
    assert read.problems and all(p.path == script and p.line == 3 for p in read.problems)
    assert isinstance(read.facts["config.verl.base_config"], Unknown)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
@pytest.mark.parametrize("name", ["out", "zero", "fifo"])
def test_config_files_that_are_links_out_devices_or_fifos(world: Path, name: str,
                                                          opened: list[str]) -> None:
    config = world / "job" / "config"
    if name == "out":
        (config / "out.yaml").symlink_to(world / "outside" / "x.yaml")
    elif name == "zero":
        (config / "zero.yaml").symlink_to("/dev/zero")
    else:
        os.mkfifo(config / "fifo.yaml")
    script = _script(world / "job", f"python3 -m verl.trainer.main_ppo --config-path={config} "
                                    f"--config-name={name}")
    read = read_paths([script])                   # a FIFO would hang here
    assert not [p for p in opened if os.path.realpath(p) in (
        str(world / "outside" / "x.yaml"), "/dev/zero") or p.endswith("fifo.yaml")]
    assert [(p.path, p.line) for p in read.problems] == [(script, 3)]
    assert "SECRET" not in repr(read.facts)


def test_a_cycle_in_a_verl_chain_names_the_file_and_not_nemo_rl(world: Path) -> None:
    config = world / "job" / "config"
    (config / "e.yaml").write_text("defaults:\n  - f\n  - _self_\nactor_rollout_ref: {}\n")
    (config / "f.yaml").write_text("defaults:\n  - e\n  - _self_\nactor_rollout_ref: {}\n")
    script = _script(world / "job", f"python3 -m verl.trainer.main_ppo --config-path={config} "
                                    "--config-name=e")
    read = read_paths([script])
    cycle = [p for p in read.problems if "cycle" in p.message]
    assert cycle and cycle[0].line == 1 and cycle[0].path.endswith(("e.yaml", "f.yaml"))
    assert "NeMo-RL" not in cycle[0].message
