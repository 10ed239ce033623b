"""``sys.path`` entries the packages probe must not open blindly (issue 21 item 4).

importlib.metadata opens every path entry that is not a folder as a zip: a FIFO there blocked
the probe forever, and a distribution inside a zip had its whole METADATA decompressed (a 1.5 GB
one took 2 GB). :func:`unusable_path_entries` names the entries that are neither a folder nor a
regular file (never handed over), :func:`zip_header` reads a zipped METADATA only up to its
header's end.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from typing import Any

from preflight.base import bounded


def zip_header(folder: Any, limit: int) -> str | None:
    """The METADATA header of a distribution inside a zip or ``.egg`` file on ``sys.path``
    (a ``zipfile.Path``): read from the decompressed stream up to the header's end, never past
    ``limit`` bytes (a 1.5 GB METADATA in a zip was read whole: 2 GB, issue 21)."""
    for name in ("METADATA", "PKG-INFO"):
        member = folder.joinpath(name)
        if not member.is_file():
            continue
        with member.open("rb") as fh:
            raw: bytes = fh.read(limit)
        head = raw.split(b"\n\n", 1)[0] + b"\n\n" if b"\n\n" in raw else raw
        return head.decode("utf-8", "replace").replace("\r\n", "\n")
    return None


def unusable_path_entries(path: Sequence[str]) -> list[tuple[str, str]]:
    """``(entry, what it is)`` for ``sys.path`` entries that exist but are neither a folder nor
    a regular file: a FIFO there hung the probe (importlib.metadata opens it as a zip)."""
    out = []
    for entry in path:
        try:
            mode = os.stat(entry or ".").st_mode
        except (OSError, ValueError, TypeError):
            continue
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            out.append((entry, bounded.kind_of(mode)))
    return out
