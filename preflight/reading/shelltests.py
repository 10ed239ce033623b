"""The tests bash decides from values alone, for :mod:`.shellexpand`: ``[ -n X ]``, ``[ X = Y ]``
(and ``[[ ]]``, ``!``), and ``case`` patterns (``a|b*)``) matched as bash matches globs."""

from __future__ import annotations

import re
from collections.abc import Callable

from preflight.reading.shelltypes import Part, Word


def bracket(words: list[str] | None) -> bool | None:
    """``[ -n X ]``, ``[ -z X ]``, ``[ X = Y ]``, ``[ X != Y ]`` (and ``[[ ]]``, ``!``) on
    values known here; None for any other test, or one on a run-time value."""
    if words is None:
        return None
    negate = bool(words) and words[0] == "!"
    words = words[1:] if negate else words
    if len(words) < 2 or (words[0], words[-1]) not in (("[", "]"), ("[[", "]]")):
        return None
    inner = words[1:-1]
    if len(inner) == 2 and inner[0] in ("-n", "-z"):
        got = bool(inner[1]) == (inner[0] == "-n")
    elif len(inner) == 1:
        got = bool(inner[0])
    elif len(inner) == 3 and inner[1] in ("=", "==", "!="):
        got = (inner[0] == inner[2]) == (inner[1] != "!=")
    else:
        return None
    return got != negate


def glob(word: Word, value: Callable[[Part], str | None]) -> re.Pattern[str] | None:
    """A ``case`` pattern as bash matches it: ``*``, ``?``, ``[...]`` where unquoted, quoted
    text literally, a variable's value as a pattern unless quoted (None: run-time value)."""
    out = []
    for part in word:
        if part.opaque is not None:
            return None
        if part.var:
            got = value(part)
            if got is None:
                return None
            text, quoted = got, part.quoted
        else:
            text, quoted = part.text, part.quoted
        if not quoted and "[:" in text:
            return None       # [[:alpha:]] classes: not worth a guess
        out.append(re.escape(text) if quoted else _glob_text(text))
    try:
        return re.compile("".join(out), re.S)
    except re.error:
        return None


def _glob_text(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[" and (end := text.find("]", i + 2)) != -1:
            body = text[i + 1:end]
            neg = body[:1] in ("!", "^")
            body = body[1:] if neg else body
            out.append("[" + ("^" if neg else "") + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
