"""Bash's pattern operators (reading/shellparam.py): ``${X%.sh}``, ``${X%%.*}``, ``${X#*/}``,
``${X##*/}``, ``${X/a/b}``, ``${X//a/b}`` read as bash computes them (each firing case is run
by bash too and compared), in a launch line and in a sourced file's assignments; any other
pattern stays unknown with the reason. Before: every one was "computed at run time", and
``X=$(basename "$0"); X=${X%.sh}`` in a sourced file kept ``X`` with its ``.sh`` (the
self-reference was taken for a default): NeMo-RL's test-suite recipe (holdout17, issue 1368)
written that way was looked for under the wrong name."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.boundary import enforced
from preflight.reading.shellexpand import launch_args
from preflight.reading.shellparam import MAX_TEXT, apply, parse
from preflight.reading.shellvars import RUNTIME, collect_variables
from preflight.reading.shellwords import split
from tests.reading.test_shelldecide import BASH, _bash

READ = [
    'X=a.sh.sh\nY=${X%.sh}', 'X=a.b.c\nY=${X%%.*}', 'X=a.b.c\nY=${X%.*}', 'X=/a/b/c\nY=${X#*/}',
    'X=/a/b/c\nY=${X##*/}', 'X=/a/b/c\nY=${X%/*}', 'X=aXa\nY=${X//a/b}', 'X=aXa\nY=${X/a/b}',
    'X=baab\nY=${X/a*/Z}', 'X=abc\nY=${X%x}', 'X=abc\nY=${X#?}', 'X=a.sh\nY="${X%.sh}.yaml"',
    'X=/j/tests/test_suites/llm\nY=${X/tests\\/test_suites/examples\\/configs\\/recipes}',
    'X=ab\nY=${X/b}', 'X=x.sh\nX=${X%.sh}\nY=$X',
]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("body", READ)
def test_operators_as_bash_computes_them(tmp_path: Path, body: str) -> None:
    want = _bash(body, "Y")
    script = tmp_path / "run.sh"
    script.write_text(body + "\npython train.py $Y\n")
    (tmp_path / ".git").mkdir()
    with enforced([str(script)]):
        got = launch_args(split(script.read_text()), lambda w: w == "train.py")
        assert got is not None and [a.text for a in got.args] == [want]
        assert got.args[0].opaque is None
        assert collect_variables(script.read_text(), script=str(script)).get("Y") == want


NOT_READ = ["${X%[0-9]}", "${X/$Z/z}", "${X//*/r}", "${X/#a/b}", "${X/a/&}", "${X%@(a|b)}",
            "${X%\"a\"}", "${X^^[0-9]}", "${X:1:2}", "${U%.sh}"]


@pytest.mark.parametrize("ref", NOT_READ)
def test_other_patterns_stay_unknown(ref: str) -> None:
    got = launch_args(split(f"X=a1\nZ=1\npython train.py {ref}\n"), lambda w: w == "train.py")
    assert got is not None and got.args[0].opaque is not None


def test_bounded() -> None:
    op = parse("X%%*a")
    assert op is not None
    assert apply(op[1], "b" * (MAX_TEXT + 1)) is None
    assert apply(op[1], "a" * MAX_TEXT) == ""


def test_a_self_transform_in_a_sourced_file_is_not_a_default(tmp_path: Path) -> None:
    script = tmp_path / "x.sh"
    (tmp_path / ".git").mkdir()
    text = 'N=$(basename "$0")\nN=${N%.sh}\nM=$N\nM=${M/x/y}\n'
    with enforced([str(script)]):
        got = collect_variables(text, script=str(script))
    assert got["N"] == "x" and got["M"] == "y"
    # an operator on a value not known here: unknown, never the value before it
    got = collect_variables('N=$(date)\nN=${N%.sh}\n', script=str(script))
    assert "N" not in got or got["N"].startswith(RUNTIME) or "$" in got["N"]


# NeMo-RL test-suite scripts (holdout17, issue 1368) with their common.env written otherwise
COMMON_ENV = """set -eou pipefail
SCRIPT_DIR=$( cd -- "$( dirname -- "${BASH_SOURCE[0]}" )" &> /dev/null && pwd)
PROJECT_ROOT=$(realpath $SCRIPT_DIR/../../..)
%s
if [[ ! -f $CONFIG_PATH ]]; then
  exit 1
fi
"""
TEST_SH = """#!/bin/bash
SCRIPT_DIR=$( cd -- "$( dirname -- "${BASH_SOURCE[0]}" )" &> /dev/null && pwd)
source $SCRIPT_DIR/common.env
cd $PROJECT_ROOT
uv run examples/run_grpo_math.py --config $CONFIG_PATH grpo.max_num_steps=40
"""
ENVS = {
    "suffix removed": 'EXP_NAME=$(basename "$0")\nEXP_NAME=${EXP_NAME%.sh}\n'
                      "CONFIG_PATH=$PROJECT_ROOT/examples/configs/recipes/llm/$EXP_NAME.yaml",
    "folder replaced": "EXP_NAME=$(basename $0 .sh)\nCONFIG_PATH=${SCRIPT_DIR/tests\\/test_suites/"
                       "examples\\/configs\\/recipes}/${EXP_NAME}.yaml",
    "from the project root": "EXP_NAME=$(basename $0 .sh)\n"
                             "CONFIG_PATH=$PROJECT_ROOT/examples/configs/recipes/llm/$EXP_NAME.yaml",
}


@pytest.mark.parametrize("env", sorted(ENVS))
def test_a_nemo_rl_test_suite_recipe_named_otherwise(tmp_path: Path, env: str) -> None:
    suites = tmp_path / "tests" / "test_suites" / "llm"
    recipes = tmp_path / "examples" / "configs" / "recipes" / "llm"
    suites.mkdir(parents=True)
    recipes.mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (suites / "common.env").write_text(COMMON_ENV % ENVS[env])
    script = suites / "grpo-llama3.1-8b-fp8-rollouts.v2.sh"
    script.write_text(TEST_SH)
    (recipes / "grpo-llama3.1-8b-fp8-rollouts.v2.yaml").write_text(
        "policy:\n  generation:\n    vllm_cfg:\n      precision: fp8\n")
    read = read_paths([str(script)], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert not isinstance(values.get("intent.rollout.fp8"), Unknown), values.get(
        "intent.rollout.fp8")
    assert values.get("intent.rollout.fp8") is True
