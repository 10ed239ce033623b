"""A script that sets variables from its own arguments (reading/shellargvset.py): holdout22's
ROCm ``train_llama3.sh TE_FP8=1 TE_FP8_RECIPE=tensorwise`` was read with its defaults, a confident
FP8 "no". Each form is checked against bash itself (the fixtures only assign and ``printf``),
and through the whole reading of a job: a loop this module cannot decide makes what it may
write Unknown, never the default."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading import shellbind
from preflight.reading.shellargs import Given, encode
from preflight.reading.shellargvset import writers

BASH = shutil.which("bash")
WORDS = ["TE_FP8=1", "R=a=b", "--fp8", "lr", "X=", "bad-name=3", "Q=two words"]

ROCM = """for ARGUMENT in "$@"
do
   KEY=$(echo $ARGUMENT | cut -f1 -d=)

   KEY_LENGTH=${#KEY}
   VALUE="${ARGUMENT:$KEY_LENGTH+1}"

   export "$KEY"="$VALUE"
done
"""

DECIDED = [
    ROCM,
    'for a in "$@"; do export "$a"; done\n',
    'for a in "$@"; do\n  declare -gx "$a"\ndone\n',
    'for a; do export "$a"; done\n',
    'export "$@"\n',
    'for a in "$@"; do\n  k=${a%%=*}\n  v=${a#*=}\n  export "$k=$v"\ndone\n',
    'for a in "$@"; do\n  IFS=\'=\' read -r k v <<< "$a"\n  export "$k"="$v"\ndone\n',
    'for a in "$@"; do\n  k=$(echo "$a" | cut -d= -f1)\n  v=$(echo "$a" | cut -d= -f2-)\n'
    '  printf -v "$k" \'%s\' "$v"\ndone\n',
    'for a in "$@"; do\n  case $a in\n    *=*) export "$a";;\n  esac\ndone\n',
    'while [ $# -gt 0 ]; do\n  export "$1"\n  shift\ndone\n',
    'for a in "$@"; do\n  k=${a%%=*}\n  v=${a#*=}\n  eval "$k=\\"$v\\""\ndone\n',
]


def _bash(body: str, words: list[str], names: list[str]) -> dict[str, str | None]:
    assert BASH is not None
    show = "".join(f'if [ -n "${{{n}+x}}" ]; then printf "%s=%s\\0" {n} "${n}"; fi\n'
                   for n in names)
    out = subprocess.run([BASH, "--norc", "--noprofile", "-c", body + show, "job.sh", *words],
                         capture_output=True, timeout=20, env={"PATH": "/usr/bin:/bin"})
    return dict(item.split("=", 1) for item in out.stdout.decode().split("\0")[:-1])


@pytest.mark.skipif(BASH is None, reason="no bash")
@pytest.mark.parametrize("body", DECIDED)
def test_what_the_loop_sets_is_what_bash_sets(body: str) -> None:
    words = [w for w in WORDS if " " not in w or "eval" not in body]
    got = writers(body, [Given(w, "run.sh:2") for w in words])
    assert len(got) == 1 and not got[0].unknown
    names = ["TE_FP8", "R", "X", "Q", "lr", "a", "k", "v", "KEY", "VALUE", "KEY_LENGTH"]
    want = {n: v for n, v in _bash(body, words, names).items() if n in ("TE_FP8", "R", "X", "Q", "lr")}
    assert {n: v for n, v, _ in got[0].values} == want
    assert {where for _, _, where in got[0].values} == {"run.sh:2"}


@pytest.mark.parametrize("body", [
    'for a in "$@"; do\n  k=$(echo "$a" | tr a-z A-Z | cut -d= -f1)\n  v=${a#*=}\n'
    '  export "$k=$v"\ndone\n',                      # a name computed otherwise
    'for a in "$@"; do\n  k=$(lookup "$a")\n  export "$k"=1\ndone\n',
    'for a in "$@"; do\n  for b in "$@"; do\n    export "$b" "$a"\n  done\ndone\n',
    'for a in "$@"; do\n  eval "$a"\ndone\n',       # eval of a word that is not plain
])
def test_a_loop_not_decided_makes_what_follows_unknown(body: str) -> None:
    text = body + 'TE_FP8="${TE_FP8:-0}"\npython train.py --fp8 $TE_FP8\n'
    got = writers(text, [Given("TE_FP8=1", "run.sh:2"), Given("$(cat x)", "run.sh:2")])
    assert got and "TE_FP8" in got[-1].unknown and not any(
        n == "TE_FP8" for w in got for n, _, _ in w.values)


def test_a_guard_other_than_key_value_leaves_the_names_unknown() -> None:
    body = 'for a in "$@"; do\n  case $a in\n    TE_*) export "$a";;\n  esac\ndone\n'
    got = writers(body, [Given("TE_FP8=1", "run.sh:2"), Given("MBS=2", "run.sh:2")])
    assert got[0].unknown == ("TE_FP8", "MBS") and not got[0].values


def test_no_caller_makes_every_later_name_unknown() -> None:
    got = writers(ROCM + 'TE_FP8="${TE_FP8:-0}"\nTP=${TP:-8}\n', None)
    assert {"TE_FP8", "TP"} <= set(got[0].unknown)


def test_option_loops_write_nothing_here() -> None:
    for body in ['while [[ $# -gt 0 ]]; do\n  case $1 in\n    --fp8) FP8=1; shift;;\n'
                 '    *) shift;;\n  esac\ndone\n',
                 'while getopts "f:" o; do\n  case $o in f) FP8=$OPTARG;; esac\ndone\n']:
        assert writers(body, [Given("--fp8", "run.sh:2")]) == []


def test_bound_text_puts_each_value_at_the_callers_word() -> None:
    argv = encode([Given("TE_FP8=1", "run.sh:5"), Given("TP=8", "run.sh:5")])
    text = ROCM + 'TE_FP8="${TE_FP8:-0}"\n'
    bound = shellbind.bind(text, argv)
    assert bound is not None
    lines = bound.text.split("\n")
    assert lines[9:11] == ["export TE_FP8=1", "export TP=8"]
    assert bound.where(10) == "run.sh:5" and bound.where(12) == 10
    assert [n.line for n in bound.notes] == [1] and not bound.notes[0].cut


def test_hostile_inputs_stay_bounded() -> None:
    many = [Given(f"K{i}=v", "run.sh:2") for i in range(10_000)]
    got = writers(ROCM, many)
    assert len(got[0].values) == 10_000
    nested = 'for a in "$@"; do ' * 300 + 'export "$a"; ' + "done; " * 300 + "\n"
    assert writers(nested, many[:3])
    assert writers("for a in \"$@\"; do export \"$a\"\n" * 2000, many[:3])   # no done
    wide = ROCM + "".join(f"echo ${{N{i}}}\n" for i in range(5000))
    got = writers(wide, None)
    assert len(got[0].unknown) <= 2048 and got[0].cut


# --- through the reading of a job ----------------------------------------------------------------

TRAIN = textwrap.dedent("""\
    import argparse, torch
    import transformer_engine.pytorch as te
    p = argparse.ArgumentParser()
    p.add_argument("--fp8", type=int, default=0)
    a = p.parse_args()
    m = te.Linear(16, 16)
    opt = torch.optim.AdamW(m.parameters())
    for i in range(3):
        with te.fp8_autocast(enabled=bool(a.fp8)):
            m(torch.randn(16, 16)).sum().backward()
        opt.step()
    """)


def _intent(root: Path, files: dict[str, str]) -> tuple[dict[str, Any], list[Any]]:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text)
    read = read_paths([str(root / "run.sh")])
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items() if k.startswith("intent.")}, list(read.problems)


TAIL = 'TE_FP8="${TE_FP8:-0}"\npython train.py --fp8 "$TE_FP8"\n'


@pytest.mark.parametrize("run, fp8", [
    ("bash train.sh TE_FP8=1 TP=8\n", True),
    ("bash train.sh TE_FP8=0\n", False),
    ("bash train.sh TP=8\n", False),
    ("bash train.sh\n", False),
    ("TE_FP8=1 bash train.sh\n", True),
])
def test_a_job_reads_the_words_its_loop_exports(tmp_path: Path, run: str, fp8: bool) -> None:
    got, problems = _intent(tmp_path, {"run.sh": run, "train.sh": ROCM + TAIL,
                                       "train.py": TRAIN})
    assert got["fp8"] is fp8
    if "=" in run.split("train.sh")[-1]:
        assert any(p.code == "argv_set" and p.line == 1 and p.path.endswith("train.sh")
                   for p in problems)


@pytest.mark.parametrize("run", [
    'bash train.sh "$@"\n',                         # words not known here
    "bash train.sh $(cat args.txt)\n",
])
def test_a_job_whose_loop_is_not_decided_is_not_fp8_no(tmp_path: Path, run: str) -> None:
    body = 'for a in "$@"; do\n  k=$(echo "$a" | tr a-z A-Z | cut -d= -f1)\n  export "$k"=1\ndone\n'
    for script in (body, ROCM):
        got, _ = _intent(tmp_path, {"run.sh": run, "train.sh": script + TAIL, "train.py": TRAIN})
        assert got["fp8"] is not False, (run, script)
    got, _ = _intent(tmp_path, {"run.sh": "bash train.sh TE_FP8=1\n",
                                "train.sh": body + TAIL, "train.py": TRAIN})
    assert got["fp8"] is not False


OPTION_LOOPS = [
    # (script, caller's words): an option loop sets FP8 in a case arm or an `if` on one line
    ('FP8=0\nwhile [[ $# -gt 0 ]]; do\n  case $1 in\n    --fp8) FP8=1; shift;;\n'
     '    --lr) LR=$2; shift 2;;\n    *) shift;;\n  esac\ndone\n', "--fp8"),
    ('FP8=0\nwhile getopts "fl:" opt; do\n  case $opt in\n    f) FP8=1;;\n'
     '    l) LR=$OPTARG;;\n  esac\ndone\n', "-f"),
    ('FP8=0\nfor a in "$@"; do\n  if [ "$a" = --fp8 ]; then FP8=1; fi\ndone\n', "--fp8"),
    ('FP8=0\n[ "$1" = --fp8 ] && FP8=1\n', "--fp8"),
    # the same loops on one line (shell16: `do case` left the arms in the loop's test and
    # `esac` closed nothing: NO-JOB)
    ('FP8=0\nwhile getopts "fl:" opt; do case $opt in f) FP8=1;; l) LR=$OPTARG;; esac; done\n',
     "-f"),
    ('FP8=0\nfor a in "$@"; do case $a in --fp8) FP8=1;; esac; done\n', "--fp8"),
]


@pytest.mark.parametrize("script, words", OPTION_LOOPS)
def test_an_option_loop_is_never_its_default(tmp_path: Path, script: str, words: str) -> None:
    got, _ = _intent(tmp_path, {"run.sh": f"bash train.sh {words}\n",
                                "train.sh": script + 'python train.py --fp8 "$FP8"\n',
                                "train.py": TRAIN})
    assert got["fp8"] is not False


@pytest.mark.parametrize("script, fp8", [
    ('FP8=1\nif [ -n "$A" ]; then FP8=1; fi\n', True),     # the same value either way
    ('FP8=0\ncase $1 in --x) LR=1;; esac\n', False),        # another name
    ('FP8=0\nFP8=${FP8:-1}; echo\n', False),                 # its own default
])
def test_an_inline_assignment_that_changes_nothing_keeps_the_value(
        tmp_path: Path, script: str, fp8: bool) -> None:
    got, _ = _intent(tmp_path, {"run.sh": "bash train.sh --x\n",
                                "train.sh": script + 'python train.py --fp8 "$FP8"\n',
                                "train.py": TRAIN})
    assert got["fp8"] is fp8


def test_a_value_over_lines_keeps_every_later_line_in_place() -> None:
    argv = encode([Given("A=x\ny", "run.sh:5"), Given("B=1", "run.sh:5")])
    bound = shellbind.bind(ROCM + "echo $A\n", argv)
    assert bound is not None
    assert bound.text.split("\n")[9:11] == ["export B=1", 'export A="$(the-argument-loop-at-line-1)"']
    assert bound.where(12) == 10 and bound.text.split("\n")[11] == "echo $A"


@pytest.mark.parametrize("body", [
    'parse() {\n  for a in "$@"; do export "$a"; done\n}\nparse "$@"\n',
    'parse() {\n  export "$@"\n}\nparse x\n',
])
def test_a_loop_in_a_function_writes_what_its_call_gives_unknown(body: str) -> None:
    got = writers(body + 'T="${TE_FP8:-0}"\n', [Given("TE_FP8=1", "run.sh:2")])
    assert got and "TE_FP8" in got[0].unknown and not got[0].values
