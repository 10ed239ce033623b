"""AReaL launch lines and YAMLs from a hostile pull request (issue 21): ``--config`` that leaves
the job (``/etc/passwd``, ``../``, ``/proc/self/environ``), a config that is a link out of the
job, ``/dev/zero`` or a FIFO, a ``defaults:`` cycle, 20,000 overrides, engine strings of
megabytes and 5,000-deep YAML. Each is a finding naming the file (and line where it has one) or an
Unknown with the reason; nothing outside the job, no device and no FIFO is opened; no traceback;
bounded CPU time (tests/cputime.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import ConfigRead, read_paths
from tests.cputime import cpu_seconds

_RECORDING: list[list[str]] = []
LINE = "python3 -m areal.infra.launcher.local examples/math/gsm8k_rl.py"


def _hook(event: str, args: tuple[object, ...]) -> None:
    if _RECORDING and event == "open" and isinstance(args[0], str):
        _RECORDING[-1].append(args[0])


@pytest.fixture()
def opened() -> Iterator[list[str]]:
    """Paths opened while the test runs (an audit hook cannot be removed: added once, it
    records only while a test holds a list)."""
    if not getattr(sys, "_fp8d_areal_hook", False):
        sys.addaudithook(_hook)
        sys._fp8d_areal_hook = True  # type: ignore[attr-defined]
    seen: list[str] = []
    _RECORDING.append(seen)
    yield seen
    _RECORDING.remove(seen)


@pytest.fixture()
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.yaml").write_text(
        "experiment_name: e\ntrial_name: t\nactor: {backend: 'megatron:d8', path: SECRET, "
        "megatron: {fp8_config: {mode: e4m3}}}\nrollout: {backend: 'sglang:d8'}\n")
    job = tmp_path / "job"
    (job / "config").mkdir(parents=True)
    monkeypatch.chdir(job)
    return tmp_path


def _script(job: Path, args: str) -> str:
    path = job / "run.sh"
    path.write_text(f"#!/bin/bash\nset -e\n{LINE} {args}\n")
    return str(path)


def _intent(read: ConfigRead) -> dict[str, Any]:
    values, _ = derive(Facts(read.facts, read.provenance))
    return dict(values)


@pytest.mark.parametrize("config", ["/etc/passwd", "../outside/x.yaml", "/proc/self/environ",
                                    "/dev/zero", "~/.bashrc"])
def test_config_that_leaves_the_job_opens_nothing_outside(world: Path, config: str,
                                                         opened: list[str]) -> None:
    script = _script(world / "job", f"--config {config} actor.backend=megatron:d8")
    read = read_paths([script])
    assert not [p for p in opened if p.startswith(("/etc/passwd", "/proc/self/environ",
                                                   "/dev/zero", str(world / "outside")))]
    assert isinstance(read.facts["config.areal.base_config"], Unknown)
    assert "SECRET" not in repr(read.facts)
    assert isinstance(_intent(read)["intent.fp8"], Unknown)    # never "no" from an unread base


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
@pytest.mark.parametrize("name", ["out", "zero", "fifo"])
def test_config_that_is_a_link_out_a_device_or_a_fifo(world: Path, name: str,
                                                      opened: list[str]) -> None:
    target = world / "job" / "config" / f"{name}.yaml"
    if name == "out":
        target.symlink_to(world / "outside" / "x.yaml")
    elif name == "zero":
        target.symlink_to("/dev/zero")
    else:
        os.mkfifo(target)
    script = _script(world / "job", f"--config config/{name}.yaml")
    read = read_paths([script])                    # a FIFO would hang here
    assert not [p for p in opened if os.path.realpath(p) in (
        str(world / "outside" / "x.yaml"), "/dev/zero") or p.endswith("fifo.yaml")]
    assert "SECRET" not in repr(read.facts)
    assert [(p.path, p.line) for p in read.problems] == [(script, 3)]
    assert isinstance(read.facts["config.areal.base_config"], Unknown)


def test_defaults_cycle_names_the_file(world: Path) -> None:
    config = world / "job" / "config"
    body = "experiment_name: e\ntrial_name: t\nrollout: {backend: 'sglang:d1'}\n"
    (config / "e.yaml").write_text("defaults:\n  - f\n  - _self_\n" + body)
    (config / "f.yaml").write_text("defaults:\n  - e\n  - _self_\n" + body)
    read = read_paths([str(config / "e.yaml")])
    cycle = [p for p in read.problems if "cycle" in p.message]
    assert cycle and cycle[0].path.endswith(("e.yaml", "f.yaml"))


def test_twenty_thousand_overrides_are_bounded(world: Path) -> None:
    (world / "job" / "exp.yaml").write_text(
        "experiment_name: e\ntrial_name: t\nactor: {backend: 'megatron:d8'}\n"
        "rollout: {backend: 'sglang:d8'}\n")
    many = " ".join(f"actor.x{i}=1" for i in range(20000))
    script = _script(world / "job", f"--config exp.yaml {many} "
                                    "actor.megatron.fp8_config.mode=e4m3")
    start = cpu_seconds()
    read = read_paths([script])
    values = _intent(read)
    assert cpu_seconds() - start < 20
    assert [p.line for p in read.problems] == [3]    # too many overrides: named at its line
    assert isinstance(values["intent.fp8"], Unknown)  # what follows the bound was not read


def test_deep_yaml_is_refused_naming_the_file(world: Path) -> None:
    (world / "job" / "deep.yaml").write_text(
        "experiment_name: e\ntrial_name: t\nrollout: {backend: 'sglang:d1'}\n"
        "a: " + "{k: " * 5000 + "v" + "}" * 5000 + "\n")
    start = cpu_seconds()
    read = read_paths([str(world / "job" / "deep.yaml")])
    values = _intent(read)
    assert cpu_seconds() - start < 20
    assert [(os.path.basename(p.path), p.line) for p in read.problems] == [("deep.yaml", 4)]
    assert isinstance(values["intent.fp8"], Unknown)


def test_long_engine_strings_and_paths_are_unknown(world: Path) -> None:
    (world / "job" / "long.yaml").write_text(
        "experiment_name: e\ntrial_name: t\ncluster: {fileroot: /x}\n"
        f"allocation_mode: \"{'megatron:' + 'd9' * 200000}+{'sglang:d1|' * 30000}\"\n"
        f"actor: {{path: \"{'Qwen3-FP8/' * 20000}\", megatron: {{fp8_config: {{}}}}}}\n"
        "rollout: {dump_to_file: true}\n")
    start = cpu_seconds()
    read = read_paths([str(world / "job" / "long.yaml")])
    values = _intent(read)
    assert cpu_seconds() - start < 20
    assert read.facts["config.kinds"] == ["areal"]
    # an FP8 setting whose engine is not known: undetermined, never "no"
    assert isinstance(values["intent.fp8"], Unknown)
    assert "characters" in values["intent.fp8"].reason
    assert isinstance(values["intent.rollout.engine"], Unknown)
    assert isinstance(values["intent.distributed"], Unknown)
