"""How text output fits the terminal it goes to: colour (``--color``, NO_COLOR, FORCE_COLOR, a
TTY) and width (COLUMNS, the terminal's, or the renderer's fixed 100 for logs and files)."""

from __future__ import annotations

import argparse
import os
import sys


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
    cols = os.environ.get("COLUMNS", "").strip()
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    if not getattr(args, "output", None) and sys.stdout.isatty():
        import shutil

        return shutil.get_terminal_size().columns
    return None
