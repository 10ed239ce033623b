"""torchtune jobs from a hostile pull request (issue 21): 20,000 overrides, a 5,000-deep YAML, odd
``_component_`` values (megabytes, a list, a number, NUL bytes), a custom recipe that is a FIFO or
a link out of the job, ``--config /etc/passwd``, a non-UTF-8 script. Each is a finding naming the
file (and line) or an Unknown with the reason; nothing outside the job and no FIFO is opened; no
traceback; bounded CPU time (tests/cputime.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.frameworks import BY_KIND
from preflight.intent import derive
from preflight.jobs.read import ConfigRead, read_paths
from tests.cputime import cpu_seconds

_RECORDING: list[list[str]] = []
LINE = "tune run --nproc_per_node 8"


def _hook(event: str, args: tuple[object, ...]) -> None:
    if _RECORDING and event == "open" and isinstance(args[0], str):
        _RECORDING[-1].append(args[0])


@pytest.fixture()
def opened() -> Iterator[list[str]]:
    if not getattr(sys, "_fp8d_torchtune_hook", False):
        sys.addaudithook(_hook)
        sys._fp8d_torchtune_hook = True  # type: ignore[attr-defined]
    seen: list[str] = []
    _RECORDING.append(seen)
    yield seen
    _RECORDING.remove(seen)


@pytest.fixture()
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "r.py").write_text("enable_fp8_training = SECRET\n")
    root = tmp_path / "job"
    root.mkdir()
    (root / "train.yaml").write_text("checkpointer: {_component_: torchtune.training.X}\n"
                                     "compile: True\ndtype: bf16\n")
    monkeypatch.chdir(root)
    return root


def _script(job: Path, args: str) -> str:
    path = job / "run.sh"
    path.write_text(f"#!/bin/bash\n{LINE} {args}\n")
    return str(path)


def _intent(read: ConfigRead) -> dict[str, Any]:
    values, _ = derive(Facts(read.facts, read.provenance))
    return dict(values)


def test_twenty_thousand_overrides_are_bounded(job: Path) -> None:
    many = " ".join(f"k{n}=v" for n in range(20_000))
    start = cpu_seconds()
    read = read_paths([_script(job, f"full_finetune_distributed --config train.yaml {many} "
                                    "enable_fp8_training=True")])
    assert cpu_seconds() - start < 20
    cut = [p for p in read.problems if "overrides" in p.message]
    assert cut and cut[0].path.endswith("run.sh")
    assert isinstance(read.facts.get("config.torchtune.unread_args"), Unknown)
    assert _intent(read)["intent.fp8"] is not False    # what follows the cut may ask for it


def test_deep_yaml_is_refused_naming_the_file(job: Path) -> None:
    (job / "deep.yaml").write_text("enable_fp8_training: true\nmodel: " + "[" * 5000 +
                                   "]" * 5000 + "\n")
    start = cpu_seconds()
    read = read_paths([_script(job, "full_finetune_distributed --config deep.yaml")])
    assert cpu_seconds() - start < 20
    assert any(p.path.endswith("deep.yaml") for p in read.problems)
    assert isinstance(read.facts["config.torchtune.base_config"], Unknown)
    assert isinstance(_intent(read)["intent.fp8"], Unknown)


@pytest.mark.parametrize("component", ["'torchtune." + "a" * 3_000_000 + "'", "[1, 2]", "7",
                                       "'torchtune.\\0x'", "{_component_: {a: b}}", "null"])
def test_odd_component_values(job: Path, component: str) -> None:
    (job / "odd.yaml").write_text(f"checkpointer: {{_component_: {component}}}\n"
                                  f"model: {{_component_: {component}}}\n"
                                  "enable_fp8_training: true\n")
    start = cpu_seconds()
    read = read_paths([str(job / "odd.yaml")])
    assert cpu_seconds() - start < 20
    if len(component) > 1_000_000:     # over the size limit: not read, said so, never "no"
        assert any(p.path.endswith("odd.yaml") for p in read.problems)
        assert _intent(read)["intent.fp8"] is not False
        return
    assert _intent(read)["intent.fp8"] is True
    data = {"model": {"_component_": component * 100}, "seed": 1}
    assert BY_KIND["torchtune"].score(data) == 0       # no own key: a component alone is not
    read = read_paths([_script(job, "full_finetune_distributed --config odd.yaml "
                                    f"model={component[:200]!r}")])
    assert _intent(read)["intent.fp8"] is True


@pytest.mark.parametrize("recipe", ["fifo", "link"])
def test_custom_recipe_fifo_or_link_out_is_never_opened(job: Path, recipe: str,
                                                        opened: list[str]) -> None:
    (job / "recipes").mkdir()
    target = job / "recipes" / "mine.py"
    if recipe == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(job.parent / "outside" / "r.py")
    read = read_paths([_script(job, "recipes/mine.py --config train.yaml "
                                    "enable_fp8_training=True")])
    assert not [p for p in opened if p.startswith(str(job.parent / "outside"))]
    assert "SECRET" not in repr(read.facts)
    assert isinstance(read.facts["config.torchtune.recipe_reads_fp8"], Unknown)
    assert isinstance(_intent(read)["intent.fp8"], Unknown)


@pytest.mark.parametrize("config", ["/etc/passwd", "../outside/r.py", "/dev/zero"])
def test_config_outside_the_job(job: Path, config: str, opened: list[str]) -> None:
    read = read_paths([_script(job, f"full_finetune_distributed --config {config} "
                                    "enable_fp8_training=True")])
    assert not [p for p in opened if p.startswith(("/etc/passwd", "/dev/zero",
                                                   str(job.parent / "outside")))]
    assert isinstance(read.facts["config.torchtune.base_config"], Unknown)
    assert isinstance(_intent(read)["intent.compile"], Unknown)


def test_non_utf8_script_names_the_file(job: Path) -> None:
    path = job / "run.sh"
    path.write_bytes(b"#!/bin/bash\ntune run full_finetune_distributed --config train.yaml "
                     b"enable_fp8_training=\xff\xfe\n")
    read = read_paths([str(path)])
    assert any(p.path.endswith("run.sh") for p in read.problems)
