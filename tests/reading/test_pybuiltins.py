"""Builtins and comprehensions over known values (reading/pybuiltins.py): ``set(range(...))``,
set algebra, ``sorted``, ``x in s``, list and set comprehensions, a list's item at an index
the text does not give (holdout12, bionemo-recipes' ``resolve_layer_precision``)."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from preflight.reading.pybuiltins import MAX_ITEMS
from preflight.reading.pysource import Module, Unresolved, parse


def _value(src: str) -> Any:
    """The ``a=`` argument of the file's one ``f(...)`` call."""
    text = textwrap.dedent(src)
    module = Module("train.py", parse("train.py", text))
    found = [c for c, _ in module.calls() if c.name == "f"]
    assert len(found) == 1, [c.func for c, _ in module.calls()]
    return found[0].kwargs["a"]


@pytest.mark.parametrize("expr, want", [
    ("set(range(1, 4))", frozenset({1, 2, 3})),
    ("set()", frozenset()),
    ("frozenset([2, 2, 3])", frozenset({2, 3})),
    ("sorted(set(range(4)) - {1})", [0, 2, 3]),
    ("sorted({3, 1, 2}, reverse=True)", [3, 2, 1]),
    ("sorted(set(range(4)) & set(range(2, 9)))", [2, 3]),
    ("sorted(set([1]) | set([5]))", [1, 5]),
    ("2 in set(range(3))", True),
    ("'fp8' not in ['fp8', None]", False),
    ("len(range(7))", 7),
    ("max(range(5))", 4),
    ("list(range(3))", [0, 1, 2]),
    ("['fp8'] * 3", ["fp8", "fp8", "fp8"]),
    ("[i * 2 for i in range(3)]", [0, 2, 4]),
    ("[i for i in range(6) if i > 3]", [4, 5]),
    ("['fp8' if i in {1, 2} else None for i in range(1, 4)]", ["fp8", "fp8", None]),
    ("{i // 2 for i in range(5)}", frozenset({0, 1, 2})),
    ("[a + b for a, b in [[1, 2], [3, 4]]]", [3, 7]),
    ("{'fp8': 1, 'fp4': 2}.get('fp4')", 2),
    ("{'fp8': 1}.get('fp4', 'bf16')", "bf16"),
    ("{'fp8': 1}.get('fp4')", None),
])
def test_known_values_are_worked_out_as_python_does(expr: str, want: Any) -> None:
    got = _value(f"f(a={expr})\n")
    assert got == want and type(got) is type(want)


def test_a_name_bound_in_the_function_and_the_loop_variable_do_not_mix() -> None:
    """The comprehension's ``i`` is its own; the function's ``i`` keeps its value after it."""
    assert _value("""
        i = 10
        xs = [i for i in range(3)]
        f(a=[i, xs])
    """) == [10, [0, 1, 2]]


def test_an_item_of_a_list_at_an_index_the_text_does_not_give() -> None:
    assert _value("""
        import os
        n = int(os.environ["N"])
        f(a=["fp8", "fp8", "fp8"][n])
    """) == "fp8"
    got = _value("""
        import os
        n = int(os.environ["N"])
        f(a=["fp8", "fp4"][n])
    """)
    assert isinstance(got, Unresolved)


@pytest.mark.parametrize("expr", [
    f"set(range({MAX_ITEMS * 4}))",                 # too many items
    f"[i for i in range({MAX_ITEMS + 1})]",
    "set(g())",                                     # not known
    "sorted([1, 'a'])",                             # Python refuses
    "[i for i in range(3) for j in range(2)]",      # two fors
    "[i for i in range(3) if g(i)]",                # a filter not known
    "list({1, 2})",                                 # a set's order is not the text's
    "[x for x in {1, 2}]",
    "sorted([1, 2], key=len)",
    "range(1.5)",
    "['a'] * 10_000",
])
def test_what_is_not_known_or_too_big_stays_unresolved(expr: str) -> None:
    got = _value(f"f(a={expr})\n")
    assert isinstance(got, Unresolved) or (isinstance(got, list) and len(got) <= MAX_ITEMS and
                                            expr.startswith("range"))


def test_a_shadowed_builtin_is_not_python_s() -> None:
    got = _value("""
        def sorted(x):
            return x
        f(a=sorted([3, 1]))
    """)
    assert got == [3, 1]


def test_hostile_a_huge_range_is_not_built() -> None:
    """``range(10**12)`` is refused by its length before any list is made (bounded memory)."""
    assert isinstance(_value("f(a=set(range(10 ** 12)))\n"), Unresolved)
    assert isinstance(_value("f(a=[i for i in range(10 ** 12)])\n"), Unresolved)


def test_facts_hold_a_set_as_a_list() -> None:
    from preflight.reading.pyfacts import plain
    assert plain(frozenset({"b", "a"})) == ["a", "b"]
