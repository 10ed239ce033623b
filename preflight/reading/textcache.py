"""One text per file per check: the job files a check reads, kept while it runs.

Detection asks whether a launch line's ``train.py`` is the framework's entry point
(``jobs/scripts._entry``) for each framework whose flags the line holds, on the plain and the
expanded text, and again when the script is read as Python: the same file was opened three
times or more per check, and a file rewritten in between could be read two ways in one
report. :func:`per_check` (around :func:`preflight.jobs.read.read_paths`) keeps each text
:func:`preflight.reading.parse.read_text` returned, by real path, for the rest of that check;
outside it nothing is kept. Bounded: :data:`MAX_KEPT` bytes in all (later texts are re-read).
A refused or unreadable file is not kept (its error is raised again, as before).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

MAX_KEPT = 64 * 1024 * 1024
"""Bytes of text kept for one check (64 files at the 1 MiB read limit)."""


class _Kept:
    """The texts one check keeps, by real path, and their length in all (kept as a running
    total: summing every kept text on each put made n puts cost n**2)."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.total = 0


_KEPT: ContextVar[_Kept | None] = ContextVar("fp8_doctor_texts", default=None)


@contextmanager
def per_check() -> Iterator[None]:
    """Keep the texts read until the block ends (a check in another thread has its own)."""
    token = _KEPT.set(_Kept())
    try:
        yield
    finally:
        _KEPT.reset(token)


def get(path: str) -> str | None:
    """The text this check already read from ``path``, if any."""
    kept = _KEPT.get()
    return None if kept is None else kept.texts.get(os.path.realpath(path))


def put(path: str, text: str) -> str:
    """Keep ``text`` as ``path``'s for the rest of the check (within :data:`MAX_KEPT`)."""
    kept = _KEPT.get()
    if kept is not None and kept.total + len(text) <= MAX_KEPT:
        real = os.path.realpath(path)
        kept.total += len(text) - len(kept.texts.get(real, ""))
        kept.texts[real] = text
    return text
