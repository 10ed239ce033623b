"""ruff (its default rules, isort, McCabe complexity) and mypy pass on the code (issue 14).

They run here, in the test suite, so `.ci/run` (the README's test command) runs them; their
versions are pinned in constraints.txt and their settings live in pyproject.toml.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], cwd=REPO, capture_output=True,
                          text=True, timeout=600, check=False)


def test_ruff_is_clean() -> None:
    res = _run("ruff", "check", "preflight", "tests", "benchmarks", "tools")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]


def test_mypy_is_clean() -> None:
    res = _run("mypy")   # files and settings: [tool.mypy] in pyproject.toml
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]


def test_no_module_is_over_400_lines() -> None:
    # The team's standard (small modules that open with their purpose): split, do not grow.
    big = {str(p.relative_to(REPO)): n for p in (REPO / "preflight").rglob("*.py")
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert not big, big


def test_every_module_opens_with_its_purpose() -> None:
    import ast

    missing = [str(p.relative_to(REPO)) for p in (REPO / "preflight").rglob("*.py")
               if not ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))]
    assert not missing, missing
