"""``shopt -s nocasematch`` (reading/shelldecide.py, redteam11's open item): ``case`` patterns
and ``[[ X == Y ]]`` then match regardless of case (``[`` does not), so ``case $P in FP8)`` with
``P=fp8`` runs that arm; each decided case is run by bash too and compared. A ``shopt`` in a
branch not known to run leaves a match that depends on case undecided. Before: ignored (the FP8
arm read as never running)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from preflight.reading.shellexpand import launch_args
from preflight.reading.shellwords import split

BASH = shutil.which("bash")
CASE = "P=fp8\ncase $P in\n  FP8) X=--fp8 ;;\n  *) X=--bf16 ;;\nesac"
TEST = "P=fp8\nX=--bf16\nif [[ $P == FP8 ]]; then X=--fp8; fi"
DECIDED = [
    "shopt -s nocasematch\n" + CASE, CASE, "shopt -s nocasematch\nshopt -u nocasematch\n" + CASE,
    "shopt -s nocasematch\n" + TEST, TEST, "shopt -s extglob nocasematch\n" + CASE,
    "shopt -s nocasematch\nP=fp8\nX=--bf16\nif [ $P == FP8 ]; then X=--fp8; fi",
    "shopt -q nocasematch\n" + CASE, "shopt -s nocasematch\nP=fp8\ncase $P in\n  [F]P?) X=--fp8 ;;"
    "\n  *) X=--bf16 ;;\nesac", "shopt -o -s nocasematch 2>/dev/null\n" + CASE,
]


def _bash(body: str, var: str = "X") -> str:
    """What real bash leaves in ``$var`` after ``body`` (shared by test_shellarith, test_shellparam)."""
    assert BASH is not None
    out = subprocess.run([BASH, "--norc", "--noprofile", "-c", body + f'\nprintf "%s" "${var}"'],
                         capture_output=True, timeout=20, env={"PATH": "/usr/bin:/bin"})
    return out.stdout.decode()


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("body", DECIDED)
def test_matched_as_bash_matches(body: str) -> None:
    got = launch_args(split(body + "\npython train.py $X\n"), lambda w: w == "train.py")
    assert got is not None
    assert [a.text for a in got.args] == [_bash(body)]
    assert got.args[0].conditional is None


@pytest.mark.parametrize("body", [
    'if [ -n "$Q" ]; then shopt -s nocasematch; fi\n' + CASE,
    "( shopt -s nocasematch )\n" + TEST,
    "shopt -s $OPTS\n" + CASE,
])
def test_a_shopt_that_may_not_run_leaves_it_undecided(body: str) -> None:
    got = launch_args(split(body + "\npython train.py $X\n"), lambda w: w == "train.py")
    assert got is not None
    texts = {got.args[0].text, *(m.text for m in got.maybe)}
    assert {"--fp8", "--bf16"} <= texts or got.args[0].conditional is not None
