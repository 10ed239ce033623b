"""Positional parameters of a script another job script runs (reading/shellargs.py,
reading/shellbind.py), checked against bash itself: each case's script is run by bash with
a ``launch`` function that only prints its arguments (``printf``); the fixtures run nothing
else (``set --``, ``shift``, ``printf``). fp8-doctor reads the same text three ways: with the
words set by ``set --`` in the script, given by a caller (the text a reader sees: ``"$@"``
written out, :func:`shellbind.bind`), and through the evaluator alone (:data:`PARAMS`)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from preflight.reading import shellargs, shellbind
from preflight.reading.shellargs import PARAMS, Given
from preflight.reading.shellexpand import launches
from preflight.reading.shellwords import split

BASH = shutil.which("bash")
ARGS = ["actor.x=1", "b c", "", "--fp8-format", "hybrid"]

CASES = [
    'launch "$@"',
    "launch $@",
    'launch "$*"',
    "launch $*",
    'launch "$1" "$2" "$3"',
    "launch $2",
    'launch "${1:-d1}" "${3:-d3}" "${9:-d9}" "${2}"',
    'launch "${@:2}"',
    'launch "${@:2:2}"',
    'launch "${*:3}"',
    'launch "$#"',
    'launch "x$@y"',
    'shift\nlaunch "$@"',
    'shift 2\nlaunch "$1" "$#"',
    'shift 1000\nlaunch "$@"',
    'set -euo pipefail\nlaunch "$@"',
    'set -- one "two three"\nlaunch "$@" "$#"',
    'ARGS=("$@")\nlaunch "${ARGS[@]}"',
    'S="$*"\nlaunch $S',
    'if [ $# -gt 2 ]; then\n  launch many\nelse\n  launch few\nfi',
    'if [ "$#" -eq 0 ]; then\n  launch none\nfi\nlaunch "$2"',
    'run() {\n  launch "$2" "$@"\n}\nrun a "b c" d',
    'main() {\n  shift\n  launch "$@"\n}\nmain "$@"',
    'eval launch \'"$1"\' "$2"',
]


def _bash(tmp_path: Path, args: list[str], body: str) -> list[str]:
    assert BASH is not None
    prelude = 'launch() { for a in "$@"; do printf "%s\\0" "$a"; done; }\n'
    out = subprocess.run([BASH, "--norc", "--noprofile", "-c", prelude + body, "job.sh", *args],
                         cwd=tmp_path, capture_output=True, timeout=20, env={"PATH": "/usr/bin:/bin"})
    return out.stdout.decode().split("\0")[:-1]


def _read(text: str, outer: dict[str, str]) -> list[str]:
    found = launches(split(text), lambda w: w == "launch", outer)
    assert found, text
    assert not any(a.opaque for a in found[0].args), [a.opaque for a in found[0].args]
    return [a.text for a in found[0].args]


def _given(args: list[str]) -> str:
    return shellargs.encode([Given(a, "/job/run.sh:3") for a in args])


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("body", CASES)
def test_positional_parameters_as_bash_gives_them(tmp_path: Path, body: str) -> None:
    want = _bash(tmp_path, ARGS, body)
    by_set = _read("set -- " + " ".join(shlex.quote(a) for a in ARGS) + "\n" + body, {})
    bound = shellbind.bind(body, _given(ARGS))
    assert bound is not None
    by_caller = _read(bound.text, {PARAMS: bound.params})
    params = json.dumps([[a, -n, None, False, "/job/run.sh:3"] for n, a in enumerate(ARGS, 1)])
    by_params = _read(body, {PARAMS: params})
    assert by_set == want
    assert by_caller == want
    assert by_params == want


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("body", ['launch "$@"', 'launch "$1"', 'launch "$#"', "shift\nlaunch $*"])
def test_no_arguments_as_bash_gives_them(tmp_path: Path, body: str) -> None:
    bound = shellbind.bind(body, _given([]))
    assert bound is not None
    assert _read(bound.text, {PARAMS: bound.params}) == _bash(tmp_path, [], body)


def test_a_script_nobody_runs_keeps_its_arguments_unknown() -> None:
    # "$@" adds nothing (no argument is invented), $1 is opaque with the reason
    found = launches(split('launch a "$@"\nlaunch "$1" "${1:-x}"\n'), lambda w: w == "launch")
    assert [a.text for a in found[0].args] == ["a"] and found[0].forwarded
    assert all(a.opaque and "given when the script is run" in a.opaque for a in found[1].args)


def test_every_bound_word_is_reported_where_the_caller_writes_it() -> None:
    words = [Given("a.b=1", "/job/run.sh:7"), Given("c.d=2", "/job/run.sh:8")]
    bound = shellbind.bind("#!/bin/bash\nX=1\npython3 -m m \\\n  e.f=3 \"$@\" | tee l\necho\n",
                           shellargs.encode(words))
    assert bound is not None
    lines = bound.text.split("\n")
    found = launches(split(bound.text), lambda w: w == "m", {PARAMS: bound.params})[0]
    got = {a.text: bound.where(bound.text.count("\n", 0, a.offset) + 1) for a in found.args}
    assert got == {"e.f=3": 4, "a.b=1": "/job/run.sh:7", "c.d=2": "/job/run.sh:8"}
    # the script's own lines after the words keep their numbers
    assert bound.where(next(n for n, t in enumerate(lines, 1) if t == "echo")) == 5


def test_opaque_and_loose_words() -> None:
    # a caller's run-time value keeps its reason; one bash may split (unquoted) makes the
    # positions after it unknown, never guessed
    words = [Given("$X", "/job/run.sh:2", "$X is not set in the script", loose=True),
             Given("b", "/job/run.sh:2")]
    bound = shellbind.bind('launch "$@"\nlaunch "$2" "$#"\n', shellargs.encode(words))
    assert bound is not None
    first, second = launches(split(bound.text), lambda w: w == "launch",
                             {PARAMS: bound.params})
    assert [bool(a.opaque) for a in first.args] == [True, False]
    assert all(a.opaque and "split" in a.opaque for a in second.args)


@pytest.mark.parametrize("body, why", [
    ("if [ -n \"$A\" ]; then\n  shift\nfi\nlaunch \"$1\"\n", "may or may not run"),
    ("shift $N\nlaunch \"$1\"\n", "count not known"),
    ("f() {\n  launch \"$1\"\n}\ntrap f EXIT\n", "function"),   # (never called: no launch)
    ("f() {\n  launch \"$1\"\n}\nf a\nf b\n", "different"),
    ("bash -c 'launch \"$1\"' _ a\n", "bash -c"),
])
def test_what_cannot_be_known_says_why(body: str, why: str) -> None:
    bound = shellbind.bind(body, _given(["x", "y"]))
    assert bound is not None
    found = launches(split(bound.text), lambda w: w == "launch", {PARAMS: bound.params})
    assert found and all(a.opaque and why in a.opaque for a in found[0].args), \
        [a.opaque for a in found[0].args]


def test_decoys_in_comments_echo_and_heredocs_are_not_written_out() -> None:
    body = ('# launch "$@"\necho "launch $@"\ncat <<EOF\nlaunch "$@"\nEOF\n'
            'launch "$@"\n')
    bound = shellbind.bind(body, _given(["k=v"]))
    assert bound is not None
    assert bound.text.count("k=v") == 1          # only the real command's "$@"
    found = launches(split(bound.text), lambda w: w == "launch", {PARAMS: bound.params})
    assert [[a.text for a in f.args] for f in found] == [["k=v"]]


def test_a_heredoc_a_variable_takes_expands_the_arguments() -> None:
    body = "read -r -d '' CMD <<EOF || true\nlaunch $1 \"$@\"\nEOF\neval $CMD\n"
    bound = shellbind.bind(body, _given(["k=v"]))
    assert bound is not None
    found = launches(split(bound.text), lambda w: w == "launch", {PARAMS: bound.params})
    assert [a.text for a in found[0].args] == ["k=v", "k=v"]


def test_many_arguments_and_hostile_words_stay_bounded() -> None:
    words = [Given(f"k{n}=v", "/job/run.sh:2") for n in range(100_000)]
    # more than MAX_WORDS: unknown (the last ones, which win, are never dropped silently)
    assert "more than" in str(shellargs.decode(shellargs.encode(words)))
    encoded = shellargs.encode(words[:shellargs.MAX_WORDS])
    bound = shellbind.bind('shift 1000\nlaunch "$@"\n', encoded)
    assert bound is not None
    found = launches(split(bound.text), lambda w: w == "launch", {PARAMS: bound.params})
    assert found[0].args[0].text == "k1000=v"
    # a word with a newline or NUL is not written into the text, the evaluator still has it
    odd = shellbind.bind('launch "$@"\n', _given(["a\nlaunch --fp8", "b\x00"]))
    assert odd is not None and "--fp8" not in odd.text
    found = launches(split(odd.text), lambda w: w == "launch", {PARAMS: odd.params})
    assert [a.text for a in found[0].args] == ["a\nlaunch --fp8", "b\x00"]
    # undecodable or oversized ARGV: unknown with a reason, nothing invented
    assert isinstance(shellargs.decode("{not json"), str)
    assert isinstance(shellargs.decode(shellargs.encode([Given("x" * 3_000_000, "r:1")])), str)


def test_run_twice_with_different_arguments() -> None:
    one, two = _given(["a=1"]), _given(["a=2"])
    both = shellargs.differing(one, two, "/job/run.sh:2", "/job/run.sh:3")
    assert [w for _, w in shellargs.calls(both)] == ["/job/run.sh:2", "/job/run.sh:3"]
    assert shellargs.differing(one, _given(["a=1"]), "x:1", "x:2") == one
    many = both
    for n in range(3, 9):
        many = shellargs.differing(many, _given([f"a={n}"]), "/job/run.sh:2", f"/job/run.sh:{n}")
    assert "more than" in str(shellargs.decode(many))
