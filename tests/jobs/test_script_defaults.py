"""A script no script of the job runs, whose positional parameters all carry defaults, read as
run without arguments: each ``${N:-default}`` is the script's default, with the
FP8D-CFG-RUNTIME-ARGS note naming the assumption (issue 22; holdout19's FlashRL recipe
yaof20/verl 928d71a5 recipe/flash_rl/gsm8k_qwen0_5B_fp8.sh: ``CAP=${2:-"-1"}`` then
``actor.imp_ratio_cap=${CAP}``). A caller in the job that gives arguments keeps giving them;
a bare ``$1``, ``"$@"``, ``shift`` or a function keeps the parameters unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths
from preflight.reading.shelldefaults import MAX_TEXT, defaults_only

RECIPE = '''\
#!/bin/bash
RUN_NAME=${1:-"gsm8k-ppo"}
CAP=${2:-"-1"}
LM=${3-"0"}
export FLASHRL_CONFIG='fp8'
python3 -m verl.trainer.main_ppo \\
    actor_rollout_ref.rollout.name=vllm \\
    actor_rollout_ref.actor.imp_ratio_cap=${CAP} \\
    trainer.experiment_name=${RUN_NAME}
'''
CAP = "config.verl.actor_rollout_ref.actor.imp_ratio_cap"
NAME = "config.verl.trainer.experiment_name"


def _notes(read: object) -> list[tuple[int | None, str]]:
    return [(p.line, p.message) for p in read.problems if p.code == "runtime_args"]


def test_named_script_takes_its_own_defaults_and_says_so(tmp_path: Path) -> None:
    recipe = tmp_path / "recipe.sh"
    recipe.write_text(RECIPE)
    read = read_paths([str(recipe)])
    assert read.facts[CAP] in (-1, "-1")
    assert read.facts[NAME] == "gsm8k-ppo"
    notes = _notes(read)
    assert len(notes) == 1 and notes[0][0] == 2
    assert "$2" in notes[0][1] and "without arguments" in notes[0][1]


@pytest.mark.parametrize("first", [True, False])
def test_a_caller_with_arguments_keeps_them(tmp_path: Path, first: bool) -> None:
    recipe = tmp_path / "recipe.sh"
    recipe.write_text(RECIPE)
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/bash\nbash recipe.sh myrun 5\n")
    read = read_paths([str(recipe), str(run)] if first else [str(run), str(recipe)])
    assert read.facts[CAP] in (5, "5")
    assert read.facts[NAME] == "myrun"
    assert _notes(read) == []


@pytest.mark.parametrize("extra", [
    "echo $1\n",                    # a bare $1: how it is run matters
    "shift\n",
    "set -- a b\n",
    "f() { echo ${1:-x}; }\n",      # a function's own $1
    "echo \"$@\"\n",
    "echo $#\n",
    "source env.sh a\n",
])
def test_other_uses_keep_them_unknown(tmp_path: Path, extra: str) -> None:
    recipe = tmp_path / "recipe.sh"
    recipe.write_text(RECIPE + extra)
    assert defaults_only(recipe.read_text()) is None
    read = read_paths([str(recipe)])
    assert isinstance(read.facts.get(CAP), Unknown) or CAP not in read.facts
    assert not any("without arguments" in m for _, m in _notes(read))


def test_which_parameters() -> None:
    assert defaults_only(RECIPE) == ["$1", "$2", "$3"]
    assert defaults_only("#!/bin/bash\n# run as: x.sh $1\nA=${12:-${ROOT}/x}\n") == ["$12"]
    assert defaults_only("#!/bin/bash\npython3 train.py --bf16\n") is None     # none used
    assert defaults_only("A=${1:-x}\n" + " " * MAX_TEXT) is None               # past the bound
