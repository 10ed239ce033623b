"""One text per file per check: the job files a check reads, kept while it runs.

Detection asks whether a launch line's ``train.py`` is the framework's entry point
(``jobs/scripts._entry``) for each framework whose flags the line holds, on the plain and the
expanded text, and again when the script is read as Python: the same file was opened three
times or more per check, and a file rewritten in between could be read two ways in one
report. :func:`per_check` (around :func:`preflight.jobs.read.read_paths`) keeps each text
:func:`preflight.reading.parse.read_text` returned, by real path, for the rest of that check;
outside it nothing is kept. Bounded: :data:`MAX_KEPT` bytes in all (later texts are re-read).
A refused or unreadable file is not kept (its error is raised again, as before).

:func:`memo` keeps, for the same check, what a reader works out from several job files (the
recipe preset of a Megatron-Bridge checkout: a folder walked and a file parsed,
``frameworks/megatron_bridge_source``), so a second launch file naming it does not work it
out again. Never across checks (no ``functools.lru_cache``): a process that runs several checks
(the imported assertion) sees a file changed between them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

MAX_KEPT = 64 * 1024 * 1024
"""Bytes of text kept for one check (64 files at the 1 MiB read limit)."""
MAX_MEMOS = 1024
"""Results :func:`memo` keeps for one check (later ones are worked out again)."""


class _Kept:
    """The texts one check keeps, by real path, and their length in all (kept as a running
    total: summing every kept text on each put made n puts cost n**2)."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.total = 0
        self.memos: dict[Hashable, Any] = {}


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


def memo(key: Hashable, make: Callable[[], T]) -> T:
    """``make()``, worked out once per check for ``key`` (outside a check: every time). The
    key names everything the result depends on besides the files the check reads."""
    kept = _KEPT.get()
    if kept is None:
        return make()
    if key in kept.memos:
        got: T = kept.memos[key]
        return got
    value = make()
    if len(kept.memos) < MAX_MEMOS:
        kept.memos[key] = value
    return value
