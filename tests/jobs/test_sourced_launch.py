"""A script the launch script ``source``\\s runs its commands in that shell: its training
command is the job's, with the words given after it as its ``"$@"`` (redteam8's four open
items, issue 21: ``source train.sh --fp8 x`` whose ``torchrun ... "$1"`` / ``"$@"`` was never
read, FP8 "no"). On the nanochat reduction (tests/jobs/nanochat_job.py, karpathy/nanochat @
92d63d4e, runs/speedrun.sh l.68). Every FP8 case here read "no" before."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths
from tests.jobs.nanochat_job import write

T = "torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- "


def _fp8(tmp_path: Path, caller: str, callee: str) -> object:
    job = tmp_path / "job"
    write(job, {"runs/go.sh": "#!/bin/bash\n" + caller + "\n",
                "runs/train.sh": "#!/bin/bash\n" + callee + "\n"})
    read = read_paths([str(job / "runs" / "go.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return values.get("intent.fp8")


@pytest.mark.parametrize(("caller", "callee"), [
    ("source train.sh --fp8 x", T + '"$1"'),
    ("source train.sh --fp8 x", T + '"$@"'),
    (". train.sh --fp8 x", T + '"$1"'),
    ("source train.sh --fp8 x", "F=$1\n" + T + "$F"),
    ("source train.sh", T + "--fp8"),
])
def test_the_sourced_scripts_launch_is_read(tmp_path: Path, caller: str, callee: str) -> None:
    assert _fp8(tmp_path, caller, callee) is True


def test_a_sourced_launch_without_the_flag_is_no_fp8(tmp_path: Path) -> None:
    assert _fp8(tmp_path, "source train.sh x --depth=3", T + '"$1"') is False


def test_a_sourced_file_of_variables_only_stays_as_it_was(tmp_path: Path) -> None:
    # env.sh sets the flag the sourcing script's launch uses (Megatron-LM's examples do so)
    assert _fp8(tmp_path, "source train.sh\n" + T + "$EXTRA", "EXTRA=--fp8") is True


def test_many_sourced_files_leave_the_called_script_followed(tmp_path: Path) -> None:
    # each `source` is a call of its own budget (reading/shellcalls.MAX_CALLS): 20 of them
    # before `bash train.sh --fp8` must not use up the calls followed
    sources = "".join(f"source env{n}.sh\n" for n in range(20))
    assert _fp8(tmp_path, sources + "bash train.sh --fp8", T + '"$@"') is True
