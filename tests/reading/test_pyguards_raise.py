"""``if c: raise`` as a guard, and the ``except ImportError`` fallback of a try-import
(reading/pyscopes.py + pyguards.py, pyfix7 items 2-3): code after ``if c: raise`` runs only when
``not c`` and the raising side is never merged with it; a flag the fallback sets
(``FP8_AVAILABLE = False``, holdout19 gpt2scratch src/train_fp8.py:32-37 @ c392292c) is the
environment's fact, so ``use_fp8 and FP8_AVAILABLE`` is what the job asks: ``use_fp8``."""

from __future__ import annotations

import ast
import textwrap

import pytest

from preflight.reading.pysource import Module
from preflight.reading.pyvalues import Unresolved


def _module(src: str, argv: tuple[str, ...] | None = ()) -> Module:
    return Module("train.py", ast.parse(textwrap.dedent(src)), argv)


def _value(src: str, name: str, argv: tuple[str, ...] | None = ()) -> object:
    m = _module(src, argv)
    return m.evaluate(ast.parse(name, mode="eval").body, m.module)


_GUARD = """
    import argparse, torch
    p = argparse.ArgumentParser()
    p.add_argument("--fp8", action="store_true")
    args = p.parse_args()
    if {test}:
        raise RuntimeError("no")
    recipe = "fp8" if args.fp8 else "bf16"
"""


@pytest.mark.parametrize("test", ["not torch.cuda.is_available()",
                                  "args.fp8 and torch.cuda.get_device_capability()[0] < 9"])
def test_code_after_an_undecided_raise_guard_runs(test: str) -> None:
    assert _value(_GUARD.format(test=test), "recipe", ("--fp8",)) == "fp8"


def test_a_guard_that_raises_stops_what_follows() -> None:
    src = _GUARD.format(test="args.fp8") + "    x = Accelerator(mixed_precision=recipe)\n"
    made = {c.name for c, _ in _module(src, ("--fp8",)).calls()}
    assert "Accelerator" not in made
    assert "Accelerator" in {c.name for c, _ in _module(src, ()).calls()}


def test_the_raising_side_is_not_merged() -> None:
    src = """
        import sys
        mp = "bf16"
        if sys.argv[1] == "x":
            mp = "fp16"
            raise SystemExit(mp)
        else:
            pass
        final = mp
    """
    assert _value(src, "final") == "bf16"


def test_a_return_guard_still_leaves_a_binding_unknown() -> None:
    src = """
        import sys
        def f():
            if sys.argv[1]:
                return None
            mp = "fp8"
            return mp
        got = f()
    """
    assert isinstance(_value(src, "got"), Unresolved)


_FLAG = """
    try:
        import transformer_engine.pytorch as te
        FP8_AVAILABLE = True
    except {kind}:
        FP8_AVAILABLE = False
    use_fp8 = {arg}
    flag = use_fp8 and FP8_AVAILABLE
"""


@pytest.mark.parametrize("arg", [True, False])
def test_an_import_flag_leaves_the_parameter(arg: bool) -> None:
    assert _value(_FLAG.format(kind="ImportError", arg=arg), "flag") is arg


@pytest.mark.parametrize("kind", ["(ImportError, ModuleNotFoundError)", "ModuleNotFoundError"])
def test_every_import_error_spelling(kind: str) -> None:
    assert _value(_FLAG.format(kind=kind, arg=True), "flag") is True


@pytest.mark.parametrize("kind", ["Exception", "RuntimeError", "(ImportError, OSError)"])
def test_a_handler_for_other_failures_stays_unknown(kind: str) -> None:
    assert isinstance(_value(_FLAG.format(kind=kind, arg=True), "flag"), Unresolved)


def test_a_try_without_an_import_stays_unknown() -> None:
    src = _FLAG.replace("import transformer_engine.pytorch as te", "x = compute()")
    assert isinstance(_value(src.format(kind="ImportError", arg=True), "flag"), Unresolved)


def test_a_call_in_the_fallback_keeps_its_condition() -> None:
    src = """
        try:
            import transformer_engine
        except ImportError:
            fallback()
    """
    when = {c.name: c.when for c, _ in _module(src).calls()}["fallback"]
    assert isinstance(when, Unresolved) and "transformer_engine" in when.reason


def test_a_thousand_guards_are_bounded() -> None:
    body = "".join(f"if sys.argv[{i % 7}] == '{i}':\n    raise SystemExit\n" for i in range(1000))
    src = "import sys\n" + body + "mp = 'fp8'\nA(mp)\n"
    m = Module("train.py", ast.parse(src), ())
    assert m.evaluate(ast.parse("mp", mode="eval").body, m.module) == "fp8"
    assert [c.when for c, _ in m.calls() if c.name == "A"] == [None]
