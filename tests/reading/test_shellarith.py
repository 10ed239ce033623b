"""Bash arithmetic in launch scripts (reading/shellarith.py, redteam11's open items): a
``for ((INIT; COND; STEP))`` body runs when COND holds after INIT, ``(( E ))`` succeeds when E
is not 0; each case is run by bash too and compared. Before: ``((`` was lexed as two subshells
(``i=0`` an assignment, ``< 0`` a redirection), the loop body was read as running whatever its
test, and ``if (( 0 ))`` opened a branch with no test, read as an ``else`` that runs."""

from __future__ import annotations

import pytest

from preflight.reading.shellarith import MAX_TEXT, evaluate, loop_runs, succeeds
from preflight.reading.shellexpand import launch_args
from preflight.reading.shellwords import split
from tests.reading.test_shelldecide import BASH, _bash

LAUNCH = "\npython train.py $X\n"

DECIDED = [
    "X=--bf16\nfor ((i = 0; i < 0; i++)); do X=--fp8; done",
    "X=--bf16\nfor ((i = 0; i < 2; i++)); do X=--fp8; done",
    "X=--bf16\nN=4\nfor ((i = N; i < 3; i++)); do X=--fp8; done",
    "X=--bf16\nN=1\nfor ((i = $N; i < 3; i++)); do X=--fp8; done",
    "X=--bf16\nfor (( i = 10 ; i > 0 ; i-- )) ; do\n  X=--fp8\ndone",
    "X=--bf16\nfor ((;;)); do X=--fp8; break; done",
    "X=--bf16\nfor ((i = 0, j = 5; i < j - 5; i++)); do X=--fp8; done",
    "X=--bf16\nif (( 0 )); then X=--fp8; fi",
    "X=--bf16\nN=2\nif (( N > 1 )); then X=--fp8; fi",
    "X=--bf16\nN=2\nif (( N % 2 == 1 || !N )); then X=--fp8; fi",
    "X=--bf16\nif ((7 / 2 == 3 && -7 / 2 == -3)); then X=--fp8; fi",
    "X=--bf16\nwhile (( 0 )); do X=--fp8; done",
    "X=--bf16\nuntil (( 1 )); do X=--fp8; done",
    "X=--bf16\nif ! (( 0 )); then X=--fp8; fi",
]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("body", DECIDED)
def test_decided_as_bash_runs_it(body: str) -> None:
    got = launch_args(split(body + LAUNCH), lambda w: w == "train.py")
    assert got is not None
    assert [a.text for a in got.args] == [_bash(body)]
    assert got.args[0].conditional is None


UNDECIDED = [
    "X=--bf16\nfor ((i = 0; i < N; i++)); do X=--fp8; done",         # N from the environment
    "X=--bf16\nN=$(nproc)\nif (( N > 1 )); then X=--fp8; fi",
    "X=--bf16\nif (( 1 / 0 )); then X=--fp8; fi",                   # bash: division by 0
    "X=--bf16\nif (( 2 ** 3 )); then X=--fp8; fi",                  # not read here
    "X=--bf16\nif (( 010 == 8 )); then X=--fp8; fi",                # octal
    "X=--bf16\nA=x\nif (( A )); then X=--fp8; fi",                  # no integer
]


@pytest.mark.parametrize("body", UNDECIDED)
def test_undecided_stays_undecided(body: str) -> None:
    got = launch_args(split(body + LAUNCH), lambda w: w == "train.py")
    assert got is not None
    arg = got.args[0]
    # the body's value may apply (never read as certain), and the other one is kept
    assert arg.conditional is not None or "--bf16" in [m.text for m in got.maybe] or \
        arg.text == "--bf16" and "--fp8" in [m.text for m in got.maybe]


def test_nested_subshells_are_not_arithmetic() -> None:
    # `((cd a; ls))` outside `for` is two subshells to bash: the command after it is read
    got = launch_args(split("((cd a; ls))\npython train.py --x\n"), lambda w: w == "train.py")
    assert got is not None and [a.text for a in got.args] == ["--x"]


def test_bounded() -> None:
    assert evaluate("1+" * MAX_TEXT + "1", lambda _: None) is None
    assert evaluate("(" * 150 + "1" + ")" * 150, lambda _: None) in (1, None)
    assert evaluate("!" * 300 + "0", lambda _: None) == 0
    assert succeeds("((" + "9" * 40 + "))", lambda _: None) is None
    assert loop_runs("((i = 0; i < 3))", lambda _: None) is None     # not for's three parts
