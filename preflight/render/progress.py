"""Progress of a command on stderr: a status line erased when done, on a terminal only.

Why (issue 24 item 5): "probing this machine / reading 1 config path(s) / evaluating rules"
stayed above every report on a terminal, and showed in pre-commit output and CI logs, where
nobody watches a step of 0.3 s. Now: on an interactive terminal a transient rich status shows the
latest step and is erased when the command ends; with ``-q``, into a pipe, a file or a log
(pre-commit, CI) nothing is printed. Messages that are not progress but something the user must
read (a rule pack's warning, "wrote FILE", why no chart was drawn) are printed everywhere, on a
line of their own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

Progress = Callable[[str], None]
NOTE_PREFIXES = ("rule warning:", "wrote ", "no chart:")
"""Messages to keep: the API's rule-pack warnings, files written, a chart not drawn."""


def interactive(stream: TextIO) -> bool:
    """A terminal a person watches (not ``TERM=dumb``, not a closed stream)."""
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def _note(stream: TextIO, msg: str) -> None:
    from preflight.render.sanitize import clean_text

    try:
        print(clean_text(msg), file=stream, flush=True)
    except (OSError, ValueError):
        pass   # stderr went away; a note is not worth failing the command for


@contextmanager
def progress_for(label: str, *, quiet: bool = False, stream: TextIO | None = None,
                 live: bool | None = None) -> Iterator[Progress]:
    """A ``progress(msg)`` callable for the block (see the module doc).

    ``quiet``: ``-q``, no status line even on a terminal. ``live``: force the terminal status
    (True) or its absence (False); default: :func:`interactive` decides.
    """
    out = stream if stream is not None else sys.stderr
    show = (live if live is not None else interactive(out)) and not quiet

    def silent(msg: str) -> None:
        if msg.startswith(NOTE_PREFIXES):
            _note(out, msg)

    if not show:
        yield silent
        return
    from rich.console import Console
    from rich.text import Text

    from preflight.render.sanitize import clean_text
    from preflight.render.terminal import console_size

    width, height = console_size(out)   # never rich's own reading of COLUMNS (terminal.py)
    console = Console(file=out, width=width, height=height, highlight=False, markup=False,
                      emoji=False)
    with console.status(Text(label)) as status:   # a transient Live: erased when done
        def update(msg: str) -> None:
            if msg.startswith(NOTE_PREFIXES):
                console.print(Text(clean_text(msg)))
            status.update(Text(f"{label}: {clean_text(msg)}"))

        yield update
