"""argparse options that share a ``dest`` and required options (preflight/reading/pyoption.py),
as Lib/argparse.py (CPython v3.11.9) reads them: ``--use_fp8`` / ``--no_fp8 dest=use_fp8``
(yxanul/testing_dense dcf75ff1 train_gated.py l.351-354) is one switch whose last flag wins and
whose default is the first one's; any other pair sharing a dest is not followed when given;
``required=True`` not given is Unresolved (argparse refuses the command line)."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from preflight.reading.pysource import Module, Unresolved, parse

_PAIR = """
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--use_fp8", action="store_true", default=True)
    p.add_argument("--no_fp8", dest="use_fp8", action="store_false")
    p.add_argument("--bf16", dest="prec", action="store_const", const="bf16", default="fp8")
    p.add_argument("--prec", dest="prec", type=str)
    p.add_argument("--recipe", required=True)
    p.add_argument("--steps", type=int, required=False, default=3)
    args = p.parse_args()
"""


def _opt(dest: str, *argv: str, text: str = _PAIR) -> Any:
    return Module("train.py", parse("train.py", textwrap.dedent(text)), tuple(argv)).option(dest)


@pytest.mark.parametrize("argv, value", [
    ((), True),                                     # the first option's default
    (("--no_fp8",), False),                         # the off flag of the pair
    (("--use_fp8", "--no_fp8"), False),             # the last one wins
    (("--no_fp8", "--use_fp8"), True),
    (("--no_f",), False),                           # a unique prefix names the off flag
])
def test_a_store_true_false_pair_is_one_switch(argv: tuple[str, ...], value: bool) -> None:
    assert _opt("use_fp8", *argv) is value


def test_the_pair_declared_off_flag_first_keeps_its_own_default() -> None:
    text = """
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--no_fp8", dest="use_fp8", action="store_false")
        p.add_argument("--use_fp8", action="store_true", default=False)
        args = p.parse_args()
    """
    assert _opt("use_fp8", text=text) is True           # store_false's default: True, first
    assert _opt("use_fp8", "--use_fp8", text=text) is True
    assert _opt("use_fp8", "--no_fp8", text=text) is False


def test_another_pair_on_one_dest_is_not_followed_when_given() -> None:
    assert _opt("prec") == "fp8"                        # neither given: the first default
    assert isinstance(_opt("prec", "--prec", "bf16"), Unresolved)
    assert isinstance(_opt("prec", "--bf16"), Unresolved)


def test_a_required_option_not_given_is_unresolved() -> None:
    got = _opt("recipe", "--steps", "4")
    assert isinstance(got, Unresolved) and got.line is not None
    assert _opt("recipe", "--recipe", "mxfp8") == "mxfp8"
    assert _opt("steps") == 3                           # required=False: its default


def test_the_same_option_read_twice_is_not_a_pair() -> None:
    # a scope's calls are resolved more than once: the option must not merge with itself
    text = _PAIR + "    def f():\n        return args.use_fp8\n    f()\n"
    assert _opt("use_fp8", "--no_fp8", text=text) is False
    assert _opt("use_fp8", "--use_fp8", text=text) is True


_OPTIONAL = """
    import argparse
    from argparse import BooleanOptionalAction
    p = argparse.ArgumentParser()
    p.add_argument("--fp8", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--compile", action=BooleanOptionalAction)
    args = p.parse_args()
"""


@pytest.mark.parametrize("dest, argv, value", [
    ("fp8", (), True),
    ("fp8", ("--no-fp8",), False),                  # the off flag argparse makes
    ("fp8", ("--no-fp8", "--fp8"), True),
    ("compile", (), None),                          # no default: None
    ("compile", ("--compile",), True),
    ("compile", ("--no-compile",), False),
])
def test_boolean_optional_action_has_its_no_flag(dest: str, argv: tuple[str, ...],
                                                 value: Any) -> None:
    # Lib/argparse.py BooleanOptionalAction (3.9+): `--x` stores True, `--no-x` False
    assert _opt(dest, *argv, text=_OPTIONAL) is value
