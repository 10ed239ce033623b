"""docs/reliability.md stays true: every test it names exists, and every limit it writes as
`` `module:NAME` = value `` equals the code's value."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "reliability.md").read_text(encoding="utf-8")
TESTS = sorted(set(re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", DOC)))
LIMITS = sorted(set(re.findall(r"`(preflight[\w.]*):(\w+)` = ([0-9.]+)", DOC)))


def test_the_contract_is_linked_from_the_readme() -> None:
    assert "docs/reliability.md" in (REPO / "README.md").read_text(encoding="utf-8")
    assert len(TESTS) >= 40 and len(LIMITS) >= 20


@pytest.mark.parametrize(("path", "name"), TESTS)
def test_every_named_test_exists(path: str, name: str) -> None:
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert name in names, f"{path}::{name} is named in docs/reliability.md but does not exist"


@pytest.mark.parametrize(("module", "name", "value"), LIMITS)
def test_every_written_limit_is_the_codes(module: str, name: str, value: str) -> None:
    actual = getattr(importlib.import_module(module), name)
    assert float(actual) == float(value), f"{module}:{name} is {actual}, the doc says {value}"
