"""Progress of the smoke step (and of a check) on stderr, never on stdout.

On a terminal: a rich status line (spinner plus the latest message, e.g. the stage the smoke child
is in) above which each message stays printed; elsewhere (a CI log, a pipe, ``TERM=dumb``): one
plain line per message, so a log shows where a slow or hung step was. The report itself goes to
stdout untouched either way.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

Progress = Callable[[str], None]


def _interactive(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):   # a closed or replaced stream
        return False


@contextmanager
def progress_display(label: str, *, stream: TextIO | None = None,
                     live: bool | None = None) -> Iterator[Progress]:
    """A ``progress(msg)`` callable for the duration of the block.

    ``live``: force the rich status (True) or plain lines (False); default: a TTY decides.
    """
    out = stream if stream is not None else sys.stderr

    def plain(msg: str) -> None:
        try:
            print(msg, file=out, flush=True)
        except (OSError, ValueError):
            pass   # stderr went away; progress is not worth failing the check for

    if not (live if live is not None else _interactive(out)):
        yield plain
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=out, highlight=False, markup=False, emoji=False)
    with console.status(Text(label)) as status:
        def update(msg: str) -> None:
            console.print(Text(msg, style="dim"))
            status.update(Text(f"{label}: {msg}"))

        yield update
