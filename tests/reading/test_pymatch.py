"""``match`` statements decided as the values decide them (reading/pyscopes.py ``_case_test``;
miles scripts/run_qwen3_4b.py at 31f1ca96 l.198-236 picks its Megatron flags with ``match
args.train_backend: case "fsdp": ... case "megatron": ...``)."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from preflight.reading.pysource import Module
from preflight.reading.pyvalues import Unresolved

_TEXT = """\
match mode:
    case "a":
        x = 1
    case "b" | "c":
        x = 2
    case None:
        x = 4
    case _:
        x = 3
"""


def _x(mode: str, text: str = _TEXT) -> Any:
    module = Module("/job/x.py", ast.parse(f"mode = {mode}\n" + text))
    return module.evaluate(ast.parse("x", mode="eval").body, module.module, 0)


@pytest.mark.parametrize(("mode", "x"), [('"a"', 1), ('"c"', 2), ("None", 4), ('"z"', 3)])
def test_literal_cases(mode: str, x: int) -> None:
    assert _x(mode) == x


def test_an_unknown_subject_is_undecided() -> None:
    assert isinstance(_x("input()"), Unresolved)


def test_a_capture_or_class_pattern_leaves_what_follows_undecided() -> None:
    text = _TEXT.replace('    case "b" | "c":', '    case str(s) if s.startswith("b"):')
    assert _x('"a"', text) == 1                 # before it: decided
    assert isinstance(_x('"b"', text), Unresolved)
    assert isinstance(_x('"z"', text), Unresolved)


def test_a_case_guard_is_a_condition_too() -> None:
    text = _TEXT.replace('    case "a":', '    case "a" if flag:')
    assert _x('"a"', "flag = False\n" + text) == 3
    assert _x('"a"', "flag = True\n" + text) == 1
