"""Bash's case modification (reading/shellparam.py): ``${X,,}``, ``${X^^}``, ``${X,}``,
``${X^}`` and their one-character pattern forms read as bash computes them (each firing case
run by bash too and compared); class / quoted / expanded patterns and non-ASCII values stay
unknown. Before: every one was "computed at run time", and holdout24's DGX Cloud recipes
(``DTYPE=${DTYPE:-fp8}; DTYPE=${DTYPE,,}``; ``--compute_dtype $COMPUTE_TYPE``) were unread."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.reading.boundary import enforced
from preflight.reading.shellexpand import launch_args
from preflight.reading.shellparam import MAX_TEXT, apply, parse
from preflight.reading.shellvars import RUNTIME, collect_variables
from preflight.reading.shellwords import split
from tests.reading.test_shelldecide import BASH, _bash

READ = [
    "X=FP8\nY=${X,,}", "X=fp8\nY=${X^^}", "X=FP8\nY=${X,}", "X=fp8\nY=${X^}",
    "X=BF16\nY=${X,,F}", "X=BfBf\nY=${X,,B}", "X=aXbX\nY=${X^^a}", "X=Ab\nY=${X,A}",
    "X=Ab\nY=${X,b}", "X=MiXeD\nY=${X,,?}", "X=mixed\nY=${X^^*}", "X=\nY=${X^^}",
    "X=FP8\nX=${X,,}\nY=$X", "D=${D:-FP8}\nD=${D,,}\nR=${R:-MX}\nR=${R,,}\nY=${D}_${R}",
    "X=F-P.8\nY=${X,,}",
]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("body", READ)
def test_case_modification_as_bash_computes_it(tmp_path: Path, body: str) -> None:
    want = _bash(body, "Y")
    script = tmp_path / "run.sh"
    script.write_text(body + "\npython train.py $Y --end\n")
    (tmp_path / ".git").mkdir()
    with enforced([str(script)]):
        got = launch_args(split(script.read_text()), lambda w: w == "train.py")
        assert got is not None
        texts = [a.text for a in got.args]
        assert texts == ([want, "--end"] if want else ["--end"])
        assert all(a.opaque is None for a in got.args)
        if want:
            assert collect_variables(script.read_text(), script=str(script)).get("Y") == want


@pytest.mark.parametrize("ref", ["${X,,[A-Z]}", "${X^^$Z}", "${X,,\"F\"}", "${X^^ab}",
                                 "${X,,@(F|P)}", "${U,,}"])
def test_other_case_patterns_stay_unknown(ref: str) -> None:
    got = launch_args(split(f"X=FP8\nZ=F\npython train.py {ref}\n"), lambda w: w == "train.py")
    assert got is not None and got.args[0].opaque is not None


def test_non_ascii_and_bounds() -> None:
    op = parse("X,,")
    assert op is not None
    assert apply(op[1], "ÄB") is None            # the locale decides: not read
    assert apply(op[1], "A" * (MAX_TEXT + 1)) is None
    assert apply(op[1], "A" * MAX_TEXT) == "a" * MAX_TEXT
    assert parse("X,,[a-z]") is None


def test_a_self_lowercase_is_not_a_second_value(tmp_path: Path) -> None:
    script = tmp_path / "x.sh"
    (tmp_path / ".git").mkdir()
    with enforced([str(script)]):
        got = collect_variables("D=FP8\nD=${D,,}\n", script=str(script))
        assert got["D"] == "fp8"
        # a value not known here stays unknown, never the value before the operator
        got = collect_variables("D=$(date)\nD=${D,,}\n", script=str(script))
    assert "D" not in got or got["D"].startswith(RUNTIME) or "$" in got["D"]
