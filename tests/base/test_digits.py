"""base/digits.py: the one test before int(), and no .isdigit() anywhere else in the package."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight.base.digits import MAX_DIGITS, ascii_digits, ascii_int

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("text", ["²", "³", "¹⁰", "٣", "１２", "", "-1", "+1", " 1", "1 ", "1.0",
                                  "0x10", "1_000"])
def test_what_is_not_plain_ascii_digits_is_no_number(text: str) -> None:
    assert ascii_int(text) is None
    assert not ascii_digits(text)


def test_too_many_digits_is_no_number_and_never_reaches_int() -> None:
    assert ascii_int("9" * 5000) is None                   # int() refuses > 4300 digits
    assert ascii_int("1" * MAX_DIGITS) == int("1" * MAX_DIGITS)
    assert ascii_int("0" * 40 + "7") == 7                  # leading zeros do not count


@given(st.text(max_size=30))
def test_any_text_gives_an_int_or_none_never_raises(text: str) -> None:
    got = ascii_int(text)
    assert got is None or (got >= 0 and str(got) == (text.lstrip("0") or "0"))


def test_no_isdigit_left_in_the_package() -> None:
    """str.isdigit() before int() was an internal error on '²' (COLUMNS=², a job's ${²}); every
    test of digits goes through base/digits.py."""
    found = [f"{p.relative_to(REPO)}:{n}" for p in (REPO / "preflight").rglob("*.py")
             if p.name != "digits.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\.isdigit\(\)", line)]
    assert not found, found


@pytest.mark.parametrize("name", ["COLUMNS", "LINES"])
@pytest.mark.parametrize("value", ["²", "9" * 5000, "-3", "0"])
def test_a_hostile_terminal_size_is_ignored_not_an_internal_error(tmp_path: Path, name: str,
                                                                  value: str) -> None:
    env = {**os.environ, name: value}
    env.pop("FP8_DOCTOR_DEBUG", None)
    res = subprocess.run([sys.executable, "-m", "preflight", "check", "--example", "--no-smoke",
                          "--format", "text", "--color", "never"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode in (0, 1), res.stderr[-2000:]
    assert "internal error" not in res.stderr


def test_a_superscript_positional_parameter_is_not_known_not_a_crash() -> None:
    from preflight.reading import shellvars

    assert shellvars.lookup("²", None, {shellvars.COUNT: "2"}) is None
    assert shellvars.lookup("3", "d", {shellvars.COUNT: "2"}) == "d"


def test_nvidia_smi_garbage_numbers_are_no_numbers() -> None:
    from preflight.probes import gpu

    assert gpu._smi_int("²") is None
    assert gpu._smi_int(" 81559 ") == 81559


@pytest.mark.parametrize("value", ["²", "9" * 5000, "", "abc"])
def test_the_console_size_never_takes_a_hostile_value(monkeypatch: pytest.MonkeyPatch,
                                                     value: str) -> None:
    from preflight.render.terminal import console_size

    monkeypatch.setenv("COLUMNS", value)
    monkeypatch.setenv("LINES", value)
    cols, lines = console_size(object())          # no fileno: not a terminal
    assert (cols, lines) == (80, 25)
    monkeypatch.setenv("COLUMNS", "132")
    assert console_size(object())[0] == 132


@pytest.mark.parametrize(("text", "want"), [("8", 8), ("-1", -1), ("1_000", 1000), (" 4 ", 4),
                                            ("٣", 3), ("²", None), ("8x", None), ("", None),
                                            ("9" * 41, None)])
def test_argparse_int_takes_what_argparse_type_int_takes(text: str, want: int | None) -> None:
    from preflight.base.digits import argparse_int

    assert argparse_int(text) == want
