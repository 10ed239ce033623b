"""redteam8 (issue 21): hostile ``-m pkg.mod`` launch lines (reading/pymodrun.py,
jobs/pymodlinks.py) on the nanochat reduction (tests/jobs/nanochat_job.py): what follows
``python -c CODE`` or ``python -`` is the code's argv, not a module run (CPython's command-line
interface: ``-c`` and ``-`` end the interpreter's options); ``accelerate launch -m pkg.train``
runs the job's module as ``accelerate launch train.py`` runs a script (accelerate v1.6.0
commands/launch.py: ``--module`` / ``-m`` makes ``training_script`` a module name)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts
from preflight.jobs.read import read_paths
from tests.jobs.nanochat_job import write


def _fp8(root: Path, line: str) -> Any:
    (root / "runs" / "go.sh").write_text("#!/bin/bash\n" + line + "\n")
    read = read_paths([str(root / "runs" / "go.sh")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


@pytest.mark.parametrize("line", [
    "python -c 'import sys; print(sys.argv)' -m scripts.base_train --fp8",
    "python3 -Bc 'print(1)' -m scripts.base_train --fp8",
    "python - -m scripts.base_train --fp8 < /dev/null",
])
def test_what_follows_c_or_stdin_is_argv_not_a_module(tmp_path: Path, line: str) -> None:
    # the module never runs: its --fp8 is no setting of the job
    assert _fp8(write(tmp_path), line) is not True


@pytest.mark.parametrize("line", [
    "python -W ignore -X dev -m scripts.base_train --fp8",
    "python3 -u -m scripts.base_train --fp8",
])
def test_interpreter_options_before_the_module(tmp_path: Path, line: str) -> None:
    assert _fp8(write(tmp_path), line) is True


@pytest.mark.parametrize("line, fp8", [
    ("accelerate launch --num_processes 8 -m scripts.base_train --fp8", True),
    ("accelerate launch -m scripts.base_train --fp8", True),
    ("accelerate-launch -m scripts.base_train --fp8", True),
    ("accelerate launch -m scripts.base_train", False),
])
def test_accelerate_launch_of_the_jobs_module_reads_the_module(tmp_path: Path, line: str,
                                                               fp8: bool) -> None:
    # was FP8 "no" with --fp8: the line was left to the accelerate reader, which reads no module
    assert _fp8(write(tmp_path), line) is fp8
