"""A launch script's variable set twice (issue 21, redteam5). The text-level variable reader
(``reading/shellvars.collect_variables``: ``$NAME`` in flag values) kept the first assignment:
``P=bf16`` then ``P=fp8`` (a decoy first, an ``if`` branch, a function that sets the global,
``declare -g`` in a function) made ``accelerate launch --mixed_precision $P`` FP8 "no" where bash
runs fp8. A name set to different values is now known only at run time (Unknown, both lines
named); the same value twice, ``A="$A more"`` appends and a function's ``local`` / ``declare``
stay as they were (checked against bash where it is installed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.shellvars import collect_variables, runtime_reason

LAUNCH = "accelerate launch --mixed_precision $P --num_processes 8 train.py\n"
BASH = shutil.which("bash")


def _bash(pre: str) -> str:
    assert BASH is not None
    return subprocess.run([BASH, "-c", pre + 'echo "$P"'], capture_output=True, text=True,
                          check=False).stdout.strip()


@pytest.mark.parametrize("pre", [
    "P=bf16\nP=fp8\n",
    "P=bf16\nif [ -n \"$FAST\" ]; then\n  P=fp8\nfi\n",
    "P=bf16\nset_fp8() {\n  P=fp8\n}\nset_fp8\n",
    "P=bf16\nset_fp8() {\n  declare -g P=fp8\n}\nset_fp8\n",
    "P=bf16\nset_fp8() {\n  export P=fp8\n}\nset_fp8\n",
])
def test_a_variable_set_again_is_never_its_first_value(tmp_path: Path, pre: str) -> None:
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + pre + LAUNCH)
    read = read_paths([str(tmp_path / "run.sh")])
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is not False
    assert runtime_reason(collect_variables(pre)["P"]) is not None
    if BASH is not None and "FAST" not in pre:
        assert _bash(pre) == "fp8"


@pytest.mark.parametrize("pre, value", [
    ("P=fp8\nP=fp8\n", "fp8"),
    ("P=fp8\nA=x\nA=\"$A y\"\n", "fp8"),
    ("P=fp8\nf() {\n  local P=bf16\n}\nf\n", "fp8"),
    ("P=fp8\nf() {\n  declare P=bf16\n}\nf\n", "fp8"),
    ("P=fp8\nf() {\n  typeset -r P=bf16\n}\nf\n", "fp8"),
])
def test_what_bash_keeps_is_kept(pre: str, value: str) -> None:
    assert collect_variables(pre)["P"] == value
    if BASH is not None:
        assert _bash(pre) == value
