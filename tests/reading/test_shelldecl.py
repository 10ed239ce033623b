"""Bash's declaration builtins (``readonly``, ``declare``, ``typeset``, ``local``, ``export -n``)
in launch scripts, read as bash applies them (reading/shelldecl.py), checked against bash where
it is installed.

Before, ``readonly training_script="train_dpo_llama.sh"`` was no assignment for the kit (its
line-level reader knew ``export``, ``local`` and ``declare -x`` only), so OpenRLHF's slurm wrapper
read alone was "no job config" (issue 22, the last note's known limits).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from preflight.jobs.read import read_paths
from preflight.reading.shellexpand import launch_args
from preflight.reading.shellvars import collect_variables, lookup, runtime_reason
from preflight.reading.shellwords import split

BASH = shutil.which("bash")
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures/configs/openrlhf/slurm"

# (id, script setting X, what the kit knows: the value, or None when bash computes it)
FORMS = [
    ("readonly", "readonly X=fp8\n", "fp8"),
    ("readonly-quoted", 'readonly X="two words"\n', "two words"),
    ("declare-r", "declare -r X=fp8\n", "fp8"),
    ("declare-rx", "declare -rx X=fp8\n", "fp8"),
    ("declare-x-r", "declare -x -r X=fp8\n", "fp8"),
    ("declare-dashdash", "declare -- X=fp8\n", "fp8"),
    ("typeset", "typeset X=fp8\n", "fp8"),
    ("export-n", "export -n X=fp8\n", "fp8"),
    ("declare-plus-x", "declare +x X=fp8\n", "fp8"),
    ("declare-l", "declare -l X=FP8\n", "fp8"),
    ("declare-u", "declare -u X=fp8\n", "FP8"),
    ("declare-i-int", "declare -i X=8\n", "8"),
    ("declare-i-expr", "declare -i X=2*4\n", None),
    ("declare-n", "Y=fp8\ndeclare -n X=Y\n", "fp8"),
    ("local-top-level", "local X=fp8 2>/dev/null\n", ""),
    ("declare-p", "declare -p X=fp8 2>/dev/null\n", ""),
    ("export-f", "export -f X=fp8 2>/dev/null\n", ""),
    ("readonly-x-invalid", "readonly -x X=fp8 2>/dev/null\n", ""),
    ("declare-invalid", "declare -Z X=fp8 2>/dev/null\n", ""),
]


def _bash_words(tmp_path: Path, text: str) -> list[str]:
    assert BASH is not None
    (tmp_path / "run.sh").write_text(text)
    proc = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", 'args() { printf "<%s>\\n" "$@"; }; . ./run.sh'],
        cwd=tmp_path, capture_output=True, text=True, timeout=30,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert proc.returncode == 0, proc.stderr
    return re.findall(r"<(.*?)>\n", proc.stdout, flags=re.S)


@pytest.mark.parametrize(("body", "want"), [(b, w) for _, b, w in FORMS],
                         ids=[i for i, _, _ in FORMS])
def test_the_value_is_the_one_bash_stores(tmp_path: Path, body: str, want: str | None) -> None:
    variables = collect_variables(body)
    got = lookup("X", None, variables)
    if want is None:                 # bash computes it: set, value not known here
        assert runtime_reason(variables["X"]) is not None
    else:
        assert (got or "") == want
    if BASH is not None:
        bash = _bash_words(tmp_path, body + 'args "$X"\n')
        assert bash == [want] if want is not None else bash != ["2*4"]


@pytest.mark.parametrize("body", [b for _, b, w in FORMS if w is not None],
                         ids=[i for i, _, w in FORMS if w is not None])
def test_the_words_a_command_gets_are_those_bash_passes(tmp_path: Path, body: str) -> None:
    text = body + "args $X --end\n"
    got = launch_args(split(text), lambda w: w == "args")
    assert got is not None
    # a variable the script leaves unset is the environment's (opaque), empty under bash -c
    words = [a.text for a in got.args if a.opaque is None]
    if BASH is not None:
        assert words == _bash_words(tmp_path, text)
    assert words[-1] == "--end"
    assert (len(got.args) == len(words)) is (collect_variables(body).get("X") is not None)


def test_local_in_a_function_is_set_there(tmp_path: Path) -> None:
    text = "run() {\n  local X=fp8\n  args $X\n}\nrun\n"
    got = launch_args(split(text), lambda w: w == "args")
    assert got is not None and [a.text for a in got.args] == ["fp8"]
    assert collect_variables(text)["X"] == "fp8"
    if BASH is not None:
        assert _bash_words(tmp_path, text) == ["fp8"]


def test_declare_i_arithmetic_is_opaque_in_a_command() -> None:
    got = launch_args(split("declare -i N=2*4\nargs --n $N\n"), lambda w: w == "args")
    assert got is not None
    assert got.args[-1].opaque is not None


def test_a_declared_name_without_value_is_no_command() -> None:
    statements = split("declare -r A=1 B\nexport -n C\n").statements
    assert [s.assign for s in statements] == ["A", None]
    assert statements[1].unexported and not statements[1].exported


def test_openrlhf_slurm_wrapper_read_alone(tmp_path: Path) -> None:
    """examples/scripts/train_nonrl_slurm.sh at v0.11.0: `readonly training_script=...`, then
    `source ./${training_script} slurm` and `torchrun ... -m ${training_commands}`."""
    for name in ("train_nonrl_slurm.sh", "train_dpo_llama.sh"):
        (tmp_path / name).write_text((FIXTURE / name).read_text())
    read = read_paths([str(tmp_path / "train_nonrl_slurm.sh")])
    assert not [p for p in read.problems if p.level == "error"]
    assert read.facts["config.openrlhf.entry"] == "train_dpo"
    assert read.facts["config.openrlhf.ds.zero_stage"] == 3
    assert read.facts["config.openrlhf.ds.param_dtype"] == "bf16"
    assert read.facts["config.openrlhf.ckpt.save_steps"] == -1    # argparse: `-1` is a value
    assert "config.openrlhf.1" not in read.facts


@pytest.mark.parametrize(("line", "exported"), [
    ("export NVTE_X=1", "1"), ("declare -x NVTE_X=1", "1"), ("typeset -rx NVTE_X=1", "1"),
    ("declare -x -l NVTE_X=ON", "on"), ("declare NVTE_X=1", None), ("export -n NVTE_X=1", None),
    ("readonly NVTE_X=1", None), ("readonly -x NVTE_X=1", None), ("local -x NVTE_X=1", None),
])
def test_the_environment_the_training_command_gets(tmp_path: Path, line: str,
                                                   exported: str | None) -> None:
    from preflight.reading.launchenv import launch_env

    text = line + "\npython train.py\n"
    got = {n: v for n, v, _ in launch_env(text, text.index("python"), {})}
    assert got.get("NVTE_X") == exported
    if BASH is not None:
        (tmp_path / "run.sh").write_text(line + ' 2>/dev/null\nbash -c \'printf "<%s>\\n" '
                                         '"${NVTE_X-unset}"\'\n')
        proc = subprocess.run([BASH, "--norc", "--noprofile", "run.sh"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=30,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        assert proc.stdout == f"<{exported or 'unset'}>\n"


@pytest.mark.parametrize(("head", "seen"), [
    ("export X=fp8\n", "fp8"), ("declare -x X=fp8\n", "fp8"),
    ("export X=fp8\nexport -n X\n", None), ("export X=fp8\ndeclare +x X\n", None),
    ("export X=bf16\nexport -n X=fp8\n", None), ("declare -r X=fp8\n", None),
])
def test_what_a_called_script_inherits(tmp_path: Path, head: str, seen: str | None) -> None:
    from preflight.reading.shellcalls import walk

    text = head + "bash child.sh\n"
    [call] = walk("run.sh", text).calls
    assert dict(call.env).get("X") == seen
    if BASH is not None:
        (tmp_path / "run.sh").write_text(text)
        (tmp_path / "child.sh").write_text('printf "<%s>\\n" "${X-unset}"\n')
        proc = subprocess.run([BASH, "--norc", "--noprofile", "run.sh"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=30,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        assert proc.stdout == f"<{seen or 'unset'}>\n"
