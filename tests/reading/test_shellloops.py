"""reading/shellloops.py: a loop body runs only when its test lets it (redteam10's open item:
``until true; do EXTRA=--fp8-format ...; done`` was FP8 "yes")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.shellexpand import Eval
from preflight.reading.shellwords import split

FP8 = 'EXTRA="--fp8-format hybrid"'


def _fp8(tmp_path: Path, before: str) -> Any:
    (tmp_path / ".git").mkdir(exist_ok=True)
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/bash\n" + before +
                      "\ntorchrun pretrain_gpt.py --bf16 --num-layers 2 $EXTRA\n")
    read = read_paths([str(script)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


@pytest.mark.parametrize("loop, want", [
    # never runs
    ("until true; do " + FP8 + "; done", False),
    ("while false; do " + FP8 + "; done", False),
    ('P=bf16\nuntil [ "$P" = bf16 ]; do ' + FP8 + "; done", False),
    ('P=bf16\nwhile [ "$P" = fp8 ]\ndo\n  ' + FP8 + "\ndone", False),
    ("until false; true; do " + FP8 + "; done", False),          # the last command decides
    ("while [ 1 = 2 ] && true; do " + FP8 + "; done", False),
    ("for x in; do " + FP8 + "; done", False),
    ("E=()\nfor x in \"${E[@]}\"; do " + FP8 + "; done", False),
    ("while false; do while true; do " + FP8 + "; done; done", False),   # nested
    ("while false; do if true; then " + FP8 + "; fi; done", False),
    # runs
    ("while true; do " + FP8 + "; break; done", True),
    ("until false; do " + FP8 + "; break; done", True),
    ('P=fp8\nwhile [ "$P" = fp8 ]; do ' + FP8 + "; P=; done", True),
    ("for x in a b; do " + FP8 + "; done", True),
    ('for x in "$UNSET"; do ' + FP8 + "; done", True),     # quoted: one word whatever it is
    ("for ((i = 0; i < 2; i++)); do " + FP8 + "; done", True),
    ("if true; then for x in a; do :; done; " + FP8 + "; fi", True),   # done closes the loop only
    # undecided: Unknown, not "no"
    ("while read -r x; do " + FP8 + "; done < list.txt", None),
    ("until [ -f /tmp/ready ]; do " + FP8 + "; done", None),
    ("for x in $(ls configs); do " + FP8 + "; done", None),
])
def test_a_loop_body_runs_only_when_its_test_lets_it(tmp_path: Path, loop: str,
                                                     want: bool | None) -> None:
    got = _fp8(tmp_path, loop)
    assert isinstance(got, Unknown) if want is None else got is want


def test_the_loop_test_is_a_branch_and_done_closes_it() -> None:
    words = split("until true; do A=1; done\nB=2\n")
    tests = [st for st in words.statements if st.test is not None]
    assert [st.loop_test for st in tests] == ["until"]
    a, b = (next(st for st in words.statements if st.assign == n) for n in "AB")
    assert a.branch == (tests[0].test[0],) and b.branch == ()
    ev = Eval({})
    ev.prepare(words)
    for st in words.statements:
        ev.step(st)
    assert ev.runs[tests[0].test[0]] is False and "A" not in ev.env and "B" in ev.env


def test_an_unclosed_loop_or_a_stray_done_is_no_error() -> None:
    for text in ("while true; do A=1\n", "done\nA=1\n", "done; done; fi; esac\nA=1\n"):
        assert any(st.assign == "A" for st in split(text).statements)
