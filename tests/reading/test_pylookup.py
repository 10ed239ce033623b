"""A name bound in branches the text does not decide (``if c: from a import M`` / ``else: from b
import M``): each branch's value is bound and merged -- the same in every branch is that value,
different is Unknown (:func:`preflight.reading.pylookup.merged`, session 43 pyfix8 item 2)."""

from __future__ import annotations

import textwrap

import pytest

from preflight.reading.pysource import Module, Ref, Unresolved, parse


def _value(src: str, name: str = "f") -> object:
    text = textwrap.dedent(src)
    module = Module("train.py", parse("train.py", text))
    calls = [c for c, _ in module.calls() if c.name == name]
    assert len(calls) == 1, [c.func for c, _ in module.calls()]
    return calls[0].kwargs["a"]


@pytest.mark.parametrize("src, want", [
    # the two sides of an if bind the same library name
    ("""
     import sys
     if sys.argv[1] == "x":
         from transformer_engine.pytorch import fp8_autocast as M
     else:
         from transformer_engine.pytorch import fp8_autocast as M
     f(a=M)
     """, Ref("transformer_engine.pytorch.fp8_autocast")),
    # the same in a function
    ("""
     import sys
     def main():
         if sys.argv[1] == "x":
             from a import M
         else:
             from a import M
         f(a=M)
     main()
     """, Ref("a.M")),
    # assignments merge as imports do
    ("""
     import sys
     if sys.argv[1] == "x":
         use_fp8 = True
     else:
         use_fp8 = True
     f(a=use_fp8)
     """, True),
    # a binding that surely runs, then one under an undecided test giving the same value
    ("""
     import os
     x = "fp8"
     if os.environ.get("Y"):
         x = "fp8"
     f(a=x)
     """, "fp8"),
])
def test_branches_that_agree_are_that_value(src: str, want: object) -> None:
    assert _value(src) == want


@pytest.mark.parametrize("src", [
    """
    import sys
    if sys.argv[1] == "x":
        from a import M
    else:
        from b import M
    f(a=M)
    """,
    """
    import sys
    def main():
        if sys.argv[1] == "x":
            from a import M
        elif sys.argv[1] == "y":
            from b import M
        else:
            from c import M
        f(a=M)
    main()
    """,
    """
    import os
    x = "fp8"
    if os.environ.get("Y"):
        x = "bf16"
    f(a=x)
    """,
])
def test_branches_that_differ_are_unknown(src: str) -> None:
    got = _value(src)
    assert isinstance(got, Unresolved) and "does not decide" in got.reason


def test_a_decided_branch_is_the_one_that_runs() -> None:
    got = _value("""
        MODE = "te"
        if MODE == "te":
            from a import M
        else:
            from b import M
        f(a=M)
    """)
    assert got == Ref("a.M")


def test_a_lone_undecided_assignment_stays_unknown() -> None:
    # no binding surely runs before it and no other side: the name may be unbound
    got = _value("""
        import os
        if os.environ.get("Y"):
            x = 1
        f(a=x)
    """)
    assert isinstance(got, Unresolved)


def test_a_lone_conditional_import_is_still_the_name() -> None:
    # quiet: `if HAVE_TE: import ...` -- the code using it runs only where it was imported
    got = _value("""
        import os
        if os.environ.get("TE"):
            from transformer_engine.pytorch import fp8_autocast as M
        f(a=M)
    """)
    assert got == Ref("transformer_engine.pytorch.fp8_autocast")


def test_a_loop_or_an_unpacking_never_merges() -> None:
    got = _value("""
        import os
        x = 1
        if os.environ.get("Y"):
            x, y = g()
        f(a=x)
    """)
    assert isinstance(got, Unresolved)


def test_many_undecided_branches_stay_unknown_in_bounds() -> None:
    lines = ["import os", "x = 1"]
    for i in range(2000):
        lines.append(f"if os.environ.get('Y{i}'):\n    x = 1")
    lines.append("f(a=x)")
    got = _value("\n".join(lines) + "\n")
    assert isinstance(got, Unresolved)
