"""Whether a test on ``__name__`` holds in the script that is run (:mod:`.pyscopes`,
:mod:`preflight.jobs.pynames`): there ``__name__`` is ``"__main__"``
(https://docs.python.org/3.11/library/__main__.html), so ``if __name__ == "__main__":`` is
the script's main path and ``if __name__ == "__notmain__":`` or ``!= "__main__"`` code that
never runs (redfix12: redteam12 found both read as the main path)."""

from __future__ import annotations

import ast


def is_main_guard(test: ast.expr) -> bool:
    """``if __name__ == "__main__":`` (the script's main path, not a condition)."""
    return main_test(test) is True


def main_test(test: ast.expr) -> bool | None:
    """``__name__ == "X"`` / ``!=`` (either side) in the script run: ``__name__`` is
    ``"__main__"`` there, so ``== "__main__"`` holds and ``== "__notmain__"`` or
    ``!= "__main__"`` never does (redfix12: both read as the main path before); None for
    any other test."""
    if not (isinstance(test, ast.Compare) and len(test.comparators) == 1 and
            isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
        return None
    sides = (test.left, test.comparators[0])
    name = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    const = [s.value for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)]
    if not name or not const:
        return None
    return (const[0] == "__main__") == isinstance(test.ops[0], ast.Eq)


__all__ = ["is_main_guard", "main_test"]
