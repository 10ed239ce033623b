"""``$PWD`` in the launch line of a script another script of the job runs from a known folder
(reading/overridelaunch.py ``_with_pwd``): holdout24's DGX Cloud torchtitan recipe runs
``cd deepseek_v3/pretrain/torchtitan; sbatch launch.sh`` and ``launch.sh`` sets
``LLMB_REPO=$PWD`` then ``--job.config_file=$LLMB_REPO/deepseek_v3_671b.toml``; the TOML was
"not set in the script" and the BF16 control (no converters) read FP8 Unknown. A script that
changes folder keeps ``$PWD`` a run-time value; one read alone takes its own folder as the
launch folder, an assumption said in a finding (reading/shellpwd.py, shell16)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

LAUNCH = """#!/bin/bash
%s
export LLMB_REPO=$PWD
TRAIN_CMD="python -m torchtitan.train --job.config_file=$LLMB_REPO/m.toml --training.steps=5"
srun bash -c "$TRAIN_CMD"
"""


def _job(tmp_path: Path, converters: str, before: str = "") -> Path:
    (tmp_path / ".git").mkdir()
    recipe = tmp_path / "recipe" / "tt"
    recipe.mkdir(parents=True)
    (recipe / "m.toml").write_text(f'[model]\nname = "llama3"\nconverters = [{converters}]\n'
                                   '[float8]\nrecipe_name = "rowwise"\n')
    (recipe / "launch.sh").write_text(LAUNCH % before)
    run = tmp_path / "run.sh"
    run.write_text("cd recipe/tt\nGPU_TYPE=h100 sbatch launch.sh\n")
    return run


def _fp8(path: Path) -> object:
    read = read_paths([str(path)], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    return values.get("intent.fp8")


@pytest.mark.parametrize(("converters", "want"), [('"float8"', True), ("", False)])
def test_pwd_of_a_called_script_names_its_folder(tmp_path: Path, converters: str,
                                                 want: bool) -> None:
    assert _fp8(_job(tmp_path, converters)) is want


@pytest.mark.parametrize("before", ["cd /opt", "pushd /tmp", "cd $SOMEWHERE"])
def test_a_script_that_changes_folder_keeps_pwd_unknown(tmp_path: Path, before: str) -> None:
    assert isinstance(_fp8(_job(tmp_path, '"float8"', before)), Unknown)


def test_a_script_read_alone_takes_its_folder_and_says_so(tmp_path: Path) -> None:
    _job(tmp_path, '"float8"')
    launch = tmp_path / "recipe" / "tt" / "launch.sh"
    assert _fp8(launch) is True
    read = read_paths([str(launch)], None)
    assert [p.code for p in read.problems if p.code == "assumed_folder"] == ["assumed_folder"]
