"""Where a command's output goes: the report to stdout or ``-o``, everything else to stderr.

stdout carries the report only; progress, notes and errors go to stderr (nowhere when it is
closed). Both front doors (``fp8-doctor`` and ``python -m preflight.cluster``) call :func:`start`
first: closed standard descriptors are re-opened on ``/dev/null`` and a closed stdout is
remembered, so a report with nowhere to go is a usage error instead of output lost in silence
(``outfile.py``). Standard library only at import, like :mod:`preflight.cli`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager

Progress = Callable[[str], None]

_stdout_closed = [False]   # set by start(): descriptor 1 was closed when the process began


def start() -> None:
    """Re-open closed standard descriptors; remember whether stdout was one of them."""
    from preflight.outfile import guard_std_streams

    _stdout_closed[0] = "stdout" in guard_std_streams()


def stdout_closed() -> bool:
    """True when stdout was closed at start-up (the report then needs ``-o``)."""
    return _stdout_closed[0]


def say(msg: str) -> None:
    """One message on stderr, control characters escaped (messages quote paths and values from
    outside); nothing when stderr is gone (a closed pty): progress is optional, the report not."""
    from preflight.render.sanitize import clean_text

    try:
        print(clean_text(msg), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def write(text: str, output: str | None) -> None:
    """The command's output to ``output`` (atomically, never over an input) or stdout."""
    from preflight.outfile import write_report

    write_report(text, output, stdout_closed=stdout_closed())
    if output:
        say(f"wrote {output}")


def guard_output(args: argparse.Namespace) -> None:
    """Refuse, before anything runs, an ``-o`` that names an input or a closed stdout."""
    from preflight.outfile import guard_output as guard

    guard(args, stdout_closed=stdout_closed())


def progress(args: argparse.Namespace) -> AbstractContextManager[Progress]:
    """Progress on stderr: a status line erased when done on a terminal; nothing with -q or into
    a pipe, a file or a log (pre-commit, CI); notes (rule warnings, files written) always."""
    from preflight.render.progress import progress_for

    return progress_for(f"fp8-doctor {args.command}", quiet=args.detail == "quiet")


def use_color(args: argparse.Namespace) -> bool:
    """``--color``, NO_COLOR / FORCE_COLOR and whether stdout is a terminal decide."""
    from preflight.render.terminal import use_color as color

    return color(args)


def text_width(args: argparse.Namespace) -> int | None:
    """Columns for text output (COLUMNS, the terminal's, or the renderer's fixed width)."""
    from preflight.render.terminal import text_width as width

    return width(args)
