"""How text output fits the terminal it goes to: colour (``--color``, NO_COLOR, FORCE_COLOR, a
TTY) and width (COLUMNS, the terminal's, or the renderer's fixed 100 for logs and files)."""

from __future__ import annotations

import argparse
import os
import sys

from preflight.base.digits import ascii_int


def use_color(args: argparse.Namespace) -> bool:
    """--color wins; then no colour into a file (-o) or under NO_COLOR (no-color.org); then
    FORCE_COLOR (force-color.org: any non-empty value; CI logs that render ANSI); then a TTY."""
    choice = getattr(args, "color", "auto")
    if choice == "always":
        return True
    if choice == "never" or getattr(args, "output", None) or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def text_width(args: argparse.Namespace) -> int | None:
    """Columns for text output: COLUMNS when set (what shells and CI export), else the terminal's
    when stdout is one, else None (the renderer's fixed 100, stable for logs and -o files)."""
    cols = ascii_int(os.environ.get("COLUMNS", "").strip(), 6)
    if cols:
        return cols
    if not getattr(args, "output", None) and sys.stdout.isatty():
        import shutil

        return shutil.get_terminal_size().columns
    return None


def console_size(stream: object) -> tuple[int, int]:
    """(columns, lines) for a rich console on ``stream``, given to it so that rich never reads
    COLUMNS / LINES itself: it calls ``int()`` on anything ``str.isdigit`` accepts, and
    ``COLUMNS=²`` ended every command with an internal error. COLUMNS and LINES when they are
    plain numbers, else the terminal's, else 80 x 25."""
    cols = ascii_int(os.environ.get("COLUMNS", "").strip(), 6)
    lines = ascii_int(os.environ.get("LINES", "").strip(), 6)
    if not (cols and lines):
        try:
            size = os.get_terminal_size(stream.fileno())  # type: ignore[attr-defined]
        except (AttributeError, ValueError, OSError):
            size = os.terminal_size((80, 25))
        cols, lines = cols or size.columns or 80, lines or size.lines or 25
    return cols, lines
