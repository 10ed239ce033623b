"""The config a launch line names, not read (redteam2's open item and redteam3, issue 21):

- ``llamafactory-cli train /etc/passwd`` (no config, no flag) was "no settings found in this
  file" with no line: the finding now names the launch line;
- ``llamafactory-cli train x.yaml`` / ``axolotl train x.yml`` / ``accelerate launch
  --config_file x.yaml`` whose file is missing, a FIFO, ``/dev/zero`` or outside the job said
  "its settings were not read, so rules that need them stay undetermined" while FP8 came out
  "no" (no FP8 setting in the configs read): FP8 is now Unknown with the reason, and a FIFO or
  device is named as such, not as "does not exist"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths
from preflight.reading.parse import ParseError

LINES = {
    "llamafactory": "llamafactory-cli train {}",
    "axolotl": "axolotl train {}",
    "accelerate": "accelerate launch --config_file {} train.py",
}


def _target(tmp_path: Path, what: str) -> str:
    name = "cfg.yaml"
    target = tmp_path / name
    if what == "fifo":
        os.mkfifo(target)
    elif what == "dev/zero":
        target.symlink_to("/dev/zero")
    elif what == "outside":
        outside = tmp_path.parent / f"{tmp_path.name}-outside.yaml"
        outside.write_text("fp8: true\n")
        target.symlink_to(outside)
    return name


@pytest.mark.parametrize("what", ["missing", "fifo", "dev/zero", "outside"])
@pytest.mark.parametrize("kind", sorted(LINES))
def test_an_unread_launch_config_leaves_fp8_unknown(tmp_path: Path, kind: str, what: str) -> None:
    (tmp_path / ".git").mkdir()          # the job root
    (tmp_path / "train.py").write_text("from accelerate import Accelerator\nAccelerator()\n")
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nset -e\n" + LINES[kind].format(_target(tmp_path, what)) + "\n")
    read = read_paths([str(script)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert isinstance(values["intent.fp8"], Unknown), values["intent.fp8"]
    problems = [p for p in read.problems if "cfg.yaml" in p.message]
    assert [(p.path, p.line) for p in problems] == [(str(script), 3)]
    if what in ("fifo", "dev/zero"):
        assert "not a regular file" in problems[0].message


def test_a_launch_line_naming_no_config_is_a_finding_at_its_line(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nset -e\n\nllamafactory-cli train /etc/passwd\n")
    with pytest.raises(ParseError) as err:
        from preflight.jobs import scripts
        scripts.read(str(script), script.read_text(), None, True)
    assert err.value.line == 4


def test_through_the_reader_the_problem_has_the_line(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nset -e\n\nllamafactory-cli train /etc/passwd\n")
    read = read_paths([str(script)])
    assert [p.line for p in read.problems if p.path == str(script)] == [4]


def test_a_config_read_keeps_its_answer(tmp_path: Path) -> None:
    (tmp_path / "cfg.yaml").write_text("model_name_or_path: x\nstage: sft\nbf16: true\n")
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nllamafactory-cli train cfg.yaml\n")
    read = read_paths([str(script)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is False
