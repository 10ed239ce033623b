"""The CLI's help formatter wraps as argparse's own does (it only finds the width without
importing shutil), for COLUMNS set, unset, zero and not a number."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from preflight.commands import build_parser
from preflight.commands.args import Formatter


@pytest.mark.parametrize("columns", ["40", "100", "250", "0", "-3", "x", "²", None])
def test_help_is_wrapped_as_argparse_wraps_it(columns: str | None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    for only in ("check", "smoke"):
        ours = build_parser(only)
        theirs = build_parser(only)
        for parser in (theirs, *_subparsers(theirs)):
            parser.formatter_class = argparse.HelpFormatter
        assert ours.format_help() == theirs.format_help()
        for mine, plain in zip(_subparsers(ours), _subparsers(theirs), strict=True):
            assert isinstance(mine._get_formatter(), Formatter)
            assert mine.format_help() == plain.format_help()


def _subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    return [p for a in parser._actions if isinstance(a, argparse._SubParsersAction)
            for p in a.choices.values()]


def test_a_check_imports_no_shutil() -> None:
    """What the formatter is for: building the check's parser leaves shutil unimported."""
    code = ("import sys; from preflight.commands import build_parser; "
            "build_parser('check').parse_args(['check', '--no-smoke']); print('shutil' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert out.strip() == "False"
