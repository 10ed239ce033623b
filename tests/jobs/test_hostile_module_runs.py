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
from preflight.facts import Facts, Unknown
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


T = "torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- "


@pytest.mark.parametrize("lines", [
    T + "${USE:+--fp8}",
    "USE=1\n" + T + "${USE:+--fp8}",
    "A=(--fp8)\n" + T + '"${A[@]}"',
    "A=()\nA+=(--fp8)\n" + T + '"${A[@]}"',
    T + "$(cat flags.txt)",
    "python -m scripts.base_train `cat flags`",
])
def test_a_word_only_the_run_knows_may_give_the_flag(tmp_path: Path, lines: str) -> None:
    # redteam8: argparse got the word's text ('${USE:+--fp8}'), no flag: FP8 "no"; any flag may
    # come from such a word, so the option is Unknown (pyoption.option_value)
    got = _fp8(write(tmp_path), lines)
    assert isinstance(got, Unknown) and "known only when it runs" in got.reason


@pytest.mark.parametrize("lines, fp8", [
    (T + '--run=$WANDB_RUN "$@"', False),      # a value of an option; the script's own "$@"
    ("F=--fp8\n" + T + "$F", True),
    (T + "--depth ${D:-2} --fp8", True),      # the value of an option, then the flag
])
def test_known_words_and_values_stay_read(tmp_path: Path, lines: str, fp8: Any) -> None:
    assert _fp8(write(tmp_path), lines) is fp8
