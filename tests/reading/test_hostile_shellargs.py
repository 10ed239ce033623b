"""redteam8 (issue 21): hostile positional parameters (reading/shellargs.py, shellbind.py,
shelldecl.function_spans, jobs/scriptargs.py), each case checked against bash itself as
tests/reading/test_shellargs.py does, then through a job: a one-line function ``f() { shift;
}`` took the rest of the script for its body (its ``"$@"`` was the function's, dropped);
``shift`` in a loop or a subshell was applied once to the script's words; a ``"$@"`` after a
``shift`` the text does not decide dropped the caller's words (FP8 "no"); ``${3-d}`` of an
empty argument took the default."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths
from preflight.reading import shellbind
from preflight.reading.shellargs import PARAMS
from preflight.reading.shelldecl import function_spans
from preflight.reading.shellexpand import launches
from preflight.reading.shellwords import split
from tests.jobs.nanochat_job import write
from tests.reading.test_shellargs import ARGS, _bash, _given

BASH = shutil.which("bash")

CASES = [
    'f() { set -- x y; }\nf\nlaunch "$@"',
    'f() { shift; }\nf\nlaunch "$@"',
    'g() { shift; launch "$@"; }\ng "$@"',
    'function h { shift 2; launch "$1"; }\nh "$@"\nlaunch "$1"',
    'f() { echo "}"; }\nlaunch "$#"',
    'launch "${3-d}" "${3:-d}" "${9-d}"',
]

UNKNOWN = [
    'while [ $# -gt 0 ]; do\n  shift\ndone\nlaunch "$@"',
    'while [ "$#" -gt 2 ]; do shift; done\nlaunch "$@"',
    'for a in 1 2; do shift; done\nlaunch "$1"',
    '[ $# -ge 1 ] && shift\nlaunch "$@"',
    'true || shift\nlaunch "$@"',
    'shift $(( $# - 1 ))\nlaunch "$@"',
    '(shift)\nlaunch "$@"',
]


def _all(text: str, outer: dict[str, str]) -> list[Any]:
    return [a.text if a.opaque is None else None
            for f in launches(split(text), lambda w: w == "launch", outer) for a in f.args]


def _three(body: str) -> list[list[Any]]:
    by_set = _all("set -- " + " ".join(shlex.quote(a) for a in ARGS) + "\n" + body, {})
    bound = shellbind.bind(body, _given(ARGS))
    assert bound is not None
    by_caller = _all(bound.text, {PARAMS: bound.params})
    params = json.dumps([[a, -n, None, False, "/job/run.sh:3"] for n, a in enumerate(ARGS, 1)])
    return [by_set, by_caller, _all(body, {PARAMS: params})]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("body", CASES)
def test_functions_and_unset_defaults_as_bash_gives_them(tmp_path: Path, body: str) -> None:
    want = _bash(tmp_path, ARGS, body)
    assert _three(body) == [want] * 3


@pytest.mark.parametrize("body", UNKNOWN)
def test_a_shift_the_text_does_not_decide_leaves_the_words_unknown(body: str) -> None:
    # never the words bash would not pass, never none of them: unknown (None) where they go
    for got in _three(body):
        assert got and None in got, (body, got)


def test_a_one_line_function_body_ends_at_its_brace() -> None:
    text = 'f() { set -- x; }\nlaunch "$@"\ng()\n{\n  if a; then { b; }; fi\n  echo "}" ${X}\n}\nz'
    spans = function_spans(text)
    assert [text[a:b] for a, b in spans] == [
        "f() { set -- x; }", 'g()\n{\n  if a; then { b; }; fi\n  echo "}" ${X}\n}']


T = "torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- "


def _job(tmp_path: Path, caller: str, callee: str) -> Any:
    root = write(tmp_path, {"runs/go.sh": "#!/bin/bash\n" + caller + "\n",
                            "runs/train.sh": "#!/bin/bash\n" + callee + "\n"})
    read = read_paths([str(root / "runs" / "go.sh")])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


@pytest.mark.parametrize("caller, callee, fp8", [
    # bash passes --fp8: the function's own set -- / shift leave the script's words
    ("bash train.sh --fp8", 'f() { set -- x y; }\nf\n' + T + '"$@"', True),
    ("bash train.sh --fp8", 'f() { shift; }\nf\n' + T + '"$@"', True),
    # bash passes nothing: the loop shifts every word away (was FP8 "yes")
    ("bash train.sh a --fp8", 'while [ $# -gt 0 ]; do shift; done\n' + T + '"$@"', "not yes"),
    # whether the first word goes is not known: --fp8 may be passed (was FP8 "no")
    ("bash train.sh a --fp8", '[ -n "$X" ] && shift\n' + T + '"$@"', "unknown"),
    ("bash train.sh --fp8 a", 'if [ -n "$X" ]; then shift; fi\n' + T + '"$@"', "unknown"),
])
def test_through_a_job(tmp_path: Path, caller: str, callee: str, fp8: Any) -> None:
    got = _job(tmp_path, caller, callee)
    if fp8 == "unknown":
        assert isinstance(got, Unknown) and "not known" in got.reason
    elif fp8 == "not yes":
        assert got is not True
    else:
        assert got is fp8
