"""reading/shellside.py keeps its scan per text (shell15): collect_variables runs once per
variable a reader looks up, and each call scanned the whole script again."""

from __future__ import annotations

from preflight.reading import shellside
from preflight.reading.shellvars import collect_variables

TEXT = "F=0\n(( F++ ))\nG=1\nif [ -n \"$A\" ]; then G=2; fi  # H=3\npython t.py --f $F\n"


def test_one_scan_per_text_and_a_fresh_answer_each_time() -> None:
    shellside._side_set.cache_clear()
    shellside.inline_set.cache_clear()
    for _ in range(5):
        got = collect_variables(TEXT)
        assert got["F"].startswith("\x00") and got["G"].startswith("\x00")
    assert shellside._side_set.cache_info().misses == 1
    assert shellside.inline_set.cache_info().misses == 1
    first = shellside.side_set(TEXT)
    first["F"] = 99
    assert shellside.side_set(TEXT)["F"] == 2


def test_comments_set_nothing() -> None:
    assert [n for n, _, _ in shellside.inline_set(TEXT)] == ["G"]
