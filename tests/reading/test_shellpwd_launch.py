"""``$(pwd)`` / ``$PWD`` in a launch line's own words (shell16): ``torchrun $(pwd)/train.py
--config $PWD/cfg.yaml`` resolves as shellpwd.py resolves a called script's assignments -- the
folder the line runs in (every ``cd`` followed), a script nobody in the job runs taken to run
from its launch folder and the note saying so; a folder not known here, or out of the job,
stays a run-time value, never read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths
from preflight.reading.shellpwd import relative

VERL = "python3 -m verl.trainer.main_ppo"
TRAIN = ("from transformers import Trainer, TrainingArguments, HfArgumentParser\n"
         "parser = HfArgumentParser(TrainingArguments)\n"
         "args = parser.parse_args_into_dataclasses()[0]\n")


def _read(root: Path, script: str, files: dict[str, str] | None = None) -> Any:
    for name, text in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "run.sh").write_text("#!/bin/bash\n" + script)
    return read_paths([str(root / "run.sh")])


@pytest.mark.parametrize("word", ["$(pwd)", "$PWD", "${PWD}", '"$(pwd)"', "`pwd`"])
def test_pwd_in_the_launch_words_is_the_launch_folder(tmp_path: Path, word: str) -> None:
    got = _read(tmp_path, f"{VERL} --config-path={word}/configs --config-name x "
                          f"data.x={word}/d\n",
                {"configs/x.yaml": "actor_rollout_ref:\n  rollout:\n    quantization: fp8\n"})
    assert got.facts["config.verl.actor_rollout_ref.rollout.quantization"] == "fp8"
    assert got.facts["config.verl.data.x"] == str(tmp_path / "d")
    assert [p.line for p in got.problems if p.code == "assumed_folder"] == [2]


def test_a_cd_moves_it(tmp_path: Path) -> None:
    got = _read(tmp_path, f"cd sub\n{VERL} data.x=$PWD/d\n", {"sub/keep": ""})
    assert got.facts["config.verl.data.x"] == str(tmp_path / "sub" / "d")


@pytest.mark.parametrize("before", ["cd $(find_it)\n", "cd /opt/elsewhere\n",
                                    'if [ -n "$Z" ]; then cd x; fi\n'])
def test_a_folder_not_known_or_out_of_the_job_stays_unknown(tmp_path: Path, before: str
                                                            ) -> None:
    got = _read(tmp_path, f"{before}{VERL} data.x=$PWD/d\n")
    assert isinstance(got.facts["config.verl.data.x"], Unknown)


def test_inside_a_bash_c_string_it_stays_a_runtime_value(tmp_path: Path) -> None:
    got = _read(tmp_path, f"bash -c 'cd x && {VERL} data.x=$PWD/d'\n")
    assert isinstance(got.facts["config.verl.data.x"], Unknown)


def test_the_script_a_launch_line_runs_from_pwd(tmp_path: Path) -> None:
    got = _read(tmp_path, "torchrun --nproc_per_node 8 $(pwd)/train.py --output_dir o "
                          "--bf16 True\n", {"train.py": TRAIN})
    assert str(tmp_path / "train.py") in [f["path"] for f in got.facts["config.files"]]
    assert [p.line for p in got.problems if p.code == "assumed_folder"] == [2]
    # after a cd out of the job: the job's own train.py is not the one that runs
    got = _read(tmp_path, "cd /opt/other\ntorchrun $(pwd)/train.py --output_dir o\n")
    assert str(tmp_path / "train.py") not in [f["path"] for f in
                                              got.facts.get("config.files", [])]


def test_relative_words() -> None:
    assert relative("$(pwd)/train.py") == "train.py"
    assert relative('"${PWD}"/a/b.py') == "a/b.py"
    assert relative("$( pwd -P )/x.py") == "x.py"
    for word in ("$PWDX/train.py", "$(pwd; x)/t.py", "$PWD/$X.py", "train.py", "$PWD",
                 "$(pwdx)/t.py"):
        assert relative(word) is None, word
