"""Fields of expanded words (:mod:`.shellexpand`): joining, word splitting, and the text of a
field with where each character was written, each piece keeping its offset in the script."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import replace

from preflight.reading.shelltypes import Field, Seg, Word

_BLANK = re.compile(r"\S+")


def nonempty(value: list[Field]) -> bool:
    return any(s.text for f in value for s in f)


def quoted_empty(word: Word) -> bool:
    return any(p.quoted and not p.var for p in word)


def join(fields: list[Field], sep: str = " ") -> Field:
    """One field of ``fields``, ``sep`` between them (``"$*"``: the first character of IFS)."""
    out: Field = []
    for n, f in enumerate(fields):
        if n and (f or sep != " "):
            out.append(Seg(sep, f[0].offset if f else out[-1].offset if out else 0,
                           f[0].branch if f else ()))
        out.extend(f)
    return out


def split_field(field: Field) -> list[Field]:
    """Word splitting on blanks, keeping each piece's offset (opaque pieces stay whole)."""
    out: list[Field] = []
    cur: Field = []
    for seg in field:
        if seg.opaque is not None:
            cur.append(replace(seg, loose=True))    # bash splits it: any number of words
            continue
        pos = 0
        for m in _BLANK.finditer(seg.text):
            if m.start() > pos and cur:      # blanks before this piece end the one before
                out.append(cur)
                cur = []
            cur.append(Seg(m.group(0), seg.offset + m.start(), seg.branch))
            pos = m.end()
        if pos < len(seg.text) and cur:      # so do trailing blanks
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def flatten(field: Field) -> tuple[str, Callable[[int], int]]:
    """The field's text, and where each of its characters was written in the script."""
    starts: list[int] = []
    pos = 0
    for seg in field:
        starts.append(pos)
        pos += len(seg.text)

    def remap(offset: int) -> int:
        k = max(bisect.bisect_right(starts, offset) - 1, 0)
        if not field:
            return 0
        seg = field[k]
        return seg.offset if seg.opaque else seg.offset + max(offset - starts[k], 0)

    return "".join(s.text for s in field), remap
