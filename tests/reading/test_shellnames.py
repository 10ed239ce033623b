"""Names computed from the script's own path (reading/shellnames.py, issue 22, holdout17's
NeMo-RL issue 1368 job): ``$(basename $0 .sh)`` and ``$(echo W | sed 's#a#b#')`` read as bash
computes them (each firing case is run by bash too and compared), ``$0`` in a sourced file is
the sourcing script, and everything beyond the simple literal forms stays unknown with a reason.
Before shellnames every one of these values was "computed at run time"."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.jobs.sourcing import sourced
from preflight.reading.boundary import enforced
from preflight.reading.shellargs import PARAMS
from preflight.reading.shellexpand import launches
from preflight.reading.shellvars import RUNTIME, collect_variables
from preflight.reading.shellwords import split

BASH = shutil.which("bash")

# NVIDIA-NeMo/RL @ 0a769cc3553a265dd1ca4648de0a7d0b1ad5ece6 tests/test_suites/llm/common.env:8,23,33
# (and @ 7ea279ab: `EXP_NAME=${EXP_NAME:-$(basename $0 .sh)}`)
COMMON_ENV = """set -eou pipefail
SCRIPT_DIR=$( cd -- "$( dirname -- "${BASH_SOURCE[0]}" )" &> /dev/null && pwd)
PROJECT_ROOT=$(realpath $SCRIPT_DIR/../../..)
EXP_NAME=%s
EXP_DIR=$SCRIPT_DIR/$EXP_NAME
CONFIG_PATH=$(echo $SCRIPT_DIR/${EXP_NAME}.yaml | sed '%s')
if [[ ! -f $CONFIG_PATH ]]; then
  echo "[ERROR] Config file $CONFIG_PATH not found"
  exit 1
fi
"""
SED = "s#tests/test_suites#examples/configs/recipes#"
TEST_SH = """#!/bin/bash
SCRIPT_DIR=$( cd -- "$( dirname -- "${BASH_SOURCE[0]}" )" &> /dev/null && pwd)
source $SCRIPT_DIR/common.env
cd $PROJECT_ROOT
uv run examples/run_grpo_math.py \\
    --config $CONFIG_PATH \\
    grpo.max_num_steps=40 \\
    logger.wandb.name=$EXP_NAME
"""
RECIPE = """defaults: ../../grpo_math_1B.yaml
policy:
  generation:
    vllm_cfg:
      precision: %s
"""
BASE = "grpo:\n  max_num_steps: 10\npolicy:\n  model_name: meta-llama/Llama-3.1-8B-Instruct\n"

ASSIGNED = [
    ("N", "N=$(basename $0 .sh)"),
    ("N", 'N=$(basename -- "$0" .sh)'),
    ("N", 'N="$(basename "${BASH_SOURCE[0]}")"'),
    ("N", 'N=$(basename "$(dirname "$0")")'),
    ("N", "N=${N:-$(basename $0 .sh)}"),
    ("N", "N=$(basename x.sh.sh .sh)"),
    ("N", "N=$(basename .sh .sh)"),
    ("C", "D=$(cd \"$(dirname \"$0\")\" && pwd)\nC=$(echo $D/$(basename $0 .sh).yaml | "
          "sed 's#scripts/sub#configs#')"),
    ("C", 'D=$(dirname "$0")\nC=$(echo "$D/x.x.yaml" | sed -e s/x/y/g)'),
    ("C", "C=$(echo a.b.c | sed 's/\\./-/')"),
    ("C", "C=$(echo a/b | sed 's/\\//|/g')"),
    ("C", "C=$(echo axb | sed 's/a.b/\\&/')"),
]


def _job(tmp_path: Path) -> Path:
    root = tmp_path / "job"
    (root / "scripts" / "sub").mkdir(parents=True)
    (root / ".git").mkdir()
    return root / "scripts" / "sub" / "x.sh"


def _bash(script: Path, body: str, name: str) -> str:
    assert BASH is not None
    script.write_text(f'{body}\nprintf "%s" "${name}"\n')
    out = subprocess.run([BASH, "--norc", "--noprofile", str(script)], cwd=script.parents[2],
                         capture_output=True, timeout=20, env={"PATH": "/usr/bin:/bin"})
    return out.stdout.decode()


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize(("name", "body"), ASSIGNED)
def test_names_as_bash_computes_them(tmp_path: Path, name: str, body: str) -> None:
    script = _job(tmp_path)
    want = _bash(script, body, name)
    with enforced([str(script)]):
        got = collect_variables(body + "\n", script=str(script))
    assert got.get(name) == want, (got, want)


def _nemo_rl(root: Path, env_name: str = "$(basename $0 .sh)", sed: str = SED,
             precision: str = "fp8") -> Path:
    suites = root / "tests" / "test_suites" / "llm"
    recipes = root / "examples" / "configs" / "recipes" / "llm"
    suites.mkdir(parents=True)
    recipes.mkdir(parents=True)
    (root / ".git").mkdir()
    (suites / "common.env").write_text(COMMON_ENV % (env_name, sed))
    script = suites / "grpo-llama3.1-8b-1n8g-megatron-fp8-rollouts.v2.sh"
    script.write_text(TEST_SH)
    (recipes / "grpo-llama3.1-8b-1n8g-megatron-fp8-rollouts.v2.yaml").write_text(
        RECIPE % precision)
    (root / "examples" / "configs" / "grpo_math_1B.yaml").write_text(BASE)
    return script


@pytest.mark.parametrize("env_name", ["$(basename $0 .sh)", "${EXP_NAME:-$(basename $0 .sh)}"])
def test_a_nemo_rl_test_suite_script_reads_its_recipe(tmp_path: Path, env_name: str) -> None:
    root = tmp_path / "job"
    script = _nemo_rl(root, env_name)
    with enforced([str(script)]):
        files, variables = sourced(str(script), script.read_text())
    assert files == [str(script.parent / "common.env")]
    assert variables["EXP_NAME"] == script.stem      # $0: the sourcing script, not common.env
    recipe = root / "examples/configs/recipes/llm" / (script.stem + ".yaml")
    assert variables["CONFIG_PATH"] == str(recipe)
    read = read_paths([str(script)], None)
    assert str(recipe) in [p for p, _ in read.files]
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is False and values.get("intent.rollout.fp8") is True


def test_the_recipe_decides_the_reading(tmp_path: Path) -> None:
    read = read_paths([str(_nemo_rl(tmp_path / "job", precision="bfloat16"))], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values.get("intent.rollout.fp8") is False


def test_0_in_a_sourced_file_is_the_sourcing_script(tmp_path: Path) -> None:
    root = tmp_path / "job"
    (root / "lib").mkdir(parents=True)
    (root / "run").mkdir()
    (root / ".git").mkdir()
    (root / "lib" / "env.sh").write_text(
        'RUN=$(basename $0 .sh)\nSELF=$(basename "${BASH_SOURCE[0]}" .sh)\n')
    run = root / "run" / "go.sh"
    text = 'source "$(dirname "$0")/../lib/env.sh"\nlaunch "$RUN"\n'
    run.write_text(text)
    with enforced([str(run)]):
        _, variables = sourced(str(run), text)
    assert variables["RUN"] == "go" and variables["SELF"] == "env"


@pytest.mark.parametrize("sub", [
    "$(echo $X | sed 's/a/b/;p')",             # a sed script with another command
    "$(echo $X | sed -n 's/a/b/p')",            # options
    "$(echo $X | sed -E 's/-tq_(simple|mooncake)$//')",     # NeMo-RL common-tq.env
    "$(echo $X | sed 's/a*/b/')",               # a regular expression operator
    "$(echo $X | sed 's/^a/b/')",
    "$(echo $X | sed 's/a/[&]/')",              # & in the replacement
    "$(echo $X | sed 's/\\(a\\)/\\1/')",        # groups
    "$(echo $X | sed 's/a/b/2')",               # flags other than g
    "$(echo $X | sed 'y/ab/cd/')",
    "$(echo $X | sed $SCRIPT)",
    "$(echo $X | sed s/a/b/ | tr a b)",         # a pipeline into something else
    "$(echo $X | tr a b)",
    "$(echo $X || sed s/a/b/)",
    "$(echo $X; sed s/a/b/)",
    "$(echo -n $X | sed s/a/b/)",
    "$(echo $X $X | sed s/a/b/)",
    "$(basename -a $X $X)",
    "$(basename $X $SUFFIX)",
    "$(basename $X .sh extra)",
    "$(basename $UNSET)",
    "$(basename $0)",           # no script path known to this reader: the run-time value
    "$(basename-x $X)",         # another command
    "$(echo_all $X | sed s/a/b/)",
    "$(basename $S)",           # word-split: `basename a b` is a with the suffix b
    "$(echo $S | sed s/a/b/)",
    "$(echo $N | sed s/a/b/)",  # echo takes -e as its option
    "$(echo \"$N\" | sed s/a/b/)",
])
def test_other_forms_stay_unknown_with_a_reason(sub: str) -> None:
    body = f'X=/a/b.sh\nS="a  b"\nN=-e\nlaunch "{sub}" next'
    found = launches(split(body), lambda w: w == "launch", {PARAMS: "[]"})
    first, second = found[0].args
    assert first.opaque and first.offset == body.index("$(")
    assert second.opaque is None and second.text == "next"


def test_a_sed_that_leads_out_of_the_job_is_not_read(tmp_path: Path) -> None:
    # the edited path is a path like any other: the read boundary refuses it
    outside = tmp_path / "elsewhere" / "llm"
    outside.mkdir(parents=True)
    root = tmp_path / "job"
    script = _nemo_rl(root, sed=f"s#{root}/tests/test_suites#{tmp_path}/elsewhere#")
    (outside / (script.stem + ".yaml")).write_text(RECIPE % "fp8")
    read = read_paths([str(script)], None)
    assert not any("elsewhere" in p for p, _ in read.files)
    assert any(p.code == "outside_job" and p.line == 6 and p.path == str(script)
               for p in read.problems)       # `--config $CONFIG_PATH`: named, at its line
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values.get("intent.rollout.fp8") is not True


def test_huge_and_deep_values_are_bounded(tmp_path: Path) -> None:
    script = _job(tmp_path)
    long = "a" * 5000
    text = (f"A=$(echo {long} | sed s/a/b/)\nB=$(echo ab | sed 's/./{'c' * 1500}/g')\n"
            'C=x\n' + 'C="$C$C"\n' * 30 + 'C=$(echo "$C" | sed s/x/y/g)\n'
            "D=" + "$(basename " * 3000 + "x" + ")" * 3000 + "\n")
    with enforced([str(script)]):
        got = collect_variables(text, script=str(script))
    for name in "ABCD":
        assert name not in got or got[name].startswith(RUNTIME) or len(got[name]) < 5000
    body = "launch " + "$(echo " * 500 + "x" + " | sed s/x/y/)" * 500
    found = launches(split(body), lambda w: w == "launch", {PARAMS: "[]"})
    assert found[0].args[0].opaque


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_literal_echo_sed_without_a_script_path(tmp_path: Path) -> None:
    body = "launch \"$(echo a.yaml | sed 's#a#b#')\" $(echo x-y | sed s/-/_/g)"
    found = launches(split(body), lambda w: w == "launch", {PARAMS: "[]"})
    assert [a.text for a in found[0].args] == ["b.yaml", "x_y"]


def test_a_launch_line_names_its_config_after_the_script(tmp_path: Path) -> None:
    # `--config configs/$(basename $0 .sh).yaml` on the launch line itself, in a script run
    # directly and in one sourced by another (then $0 is the sourcing script)
    root = tmp_path / "job"
    (root / "configs").mkdir(parents=True)
    (root / ".git").mkdir()
    for stem, precision in (("go", "fp8"), ("lib", "bfloat16")):
        (root / "configs" / f"{stem}.yaml").write_text(
            "grpo:\n  max_num_steps: 10\n" + (RECIPE % precision).split("\n", 1)[1])
    line = ('uv run examples/run_grpo_math.py --config '
            '"$(dirname "${BASH_SOURCE[0]}")/configs/$(basename $0 .sh).yaml"\n')
    for name, text, fp8 in (("go.sh", line, True), ("lib.sh", line, False),
                            ("go.sh", "source ./lib.sh\n", True)):
        if name == "go.sh" and text != line:
            (root / "lib.sh").write_text("#!/bin/bash\n" + line)
        (root / name).write_text("#!/bin/bash\n" + text)
        read = read_paths([str(root / name)], None)
        values, _ = derive(Facts(read.facts, read.provenance))
        assert values.get("intent.rollout.fp8") is fp8, (name, text)
