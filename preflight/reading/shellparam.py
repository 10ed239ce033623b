"""Bash's pattern operators on a variable's value: ``${X%SUFFIX}``, ``${X%%SUFFIX}``,
``${X#PREFIX}``, ``${X##PREFIX}``, ``${X/PAT/REP}`` and ``${X//PAT/REP}``, read as bash computes
them where the value is known (bash(1), "Parameter Expansion"). Nothing is run.

holdout17 (NeMo-RL issue 1368) read the recipe a test-suite script names through ``EXP_NAME``;
the same script written ``EXP_NAME=$(basename "$0"); EXP_NAME=${EXP_NAME%.sh}`` kept the name
with its ``.sh`` (the self-reference was taken for a default and the first value kept), and
``${SCRIPT_DIR/tests\\/test_suites/examples\\/configs\\/recipes}`` was a run-time value. Only
patterns of literal text, ``*`` and ``?`` are read (a ``[...]`` class, an extglob, a quote or an
expansion inside the pattern: None, the value stays unknown with its reason); values are bounded
(:data:`MAX_TEXT`).

Case modification (``${X,,}``, ``${X^^}``, ``${X,}``, ``${X^}``, bash >= 4.0) is read the same
way: holdout24's DGX Cloud recipes write ``DTYPE=${DTYPE:-bf16}; DTYPE=${DTYPE,,}`` and branch on
the lowercased value; the caller's ``DTYPE=fp8`` must reach the branch as ``fp8``. A pattern form
(``${X,,[A-Z]}``) is read only where its pattern is one character or ``?``/``*`` (bash applies it
per character); any other pattern is None (the value stays unknown). Bash lowercases by the
locale; only ASCII letters are changed here (a non-ASCII letter in the value: None).
"""

from __future__ import annotations

import re

MAX_TEXT = 4096
"""Characters of a value an operator is applied to (a path or a name: under 300)."""

OPS = ("%%", "%", "##", "#", "//", "/", ",,", ",", "^^", "^")
_BRACED = re.compile(r"([A-Za-z_]\w*)(%%|%|##|#|//|/|,,|,|\^\^|\^)(.*)", re.S)
_CASE = (",,", ",", "^^", "^")


def parse(inner: str) -> tuple[str, tuple[str, str, str]] | None:
    """``NAME%PAT`` (what ``${...}`` holds) as (NAME, (operator, pattern, replacement)); None
    when it is no such form or its pattern is not read here."""
    m = _BRACED.fullmatch(inner)
    if m is None:
        return None
    name, op, rest = m.groups()
    if op in _CASE:
        return (name, (op, rest, "")) if _case_pattern(rest) else None
    rep = ""
    if op in ("/", "//"):
        cut = _unescaped_slash(rest)
        if cut is not None:
            rest, rep = rest[:cut], rest[cut + 1:]
        rep = rep.replace("\\/", "/")
        if rest.startswith(("#", "%")) or any(c in rep for c in "$`'\"\\&"):
            return None      # anchored forms, a replacement with expansions or `&`: not read
    if _regex(rest) is None:
        return None
    return name, (op, rest, rep)


def _unescaped_slash(text: str) -> int | None:
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "/":
            return i
        i += 1
    return None


def _tokens(pattern: str) -> list[str] | None:
    """A glob of literal text, ``*`` and ``?`` (``\\x``: x) as tokens: ``*``, ``?`` or
    ``=c`` (the literal character c); None: another glob or an expansion."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append("=" + pattern[i + 1])
            i += 2
            continue
        if c in "$`'\"[](){}|!@+\\":
            return None
        out.append(c if c in "*?" else "=" + c)
        i += 1
    return out


def _regex(pattern: str) -> str | None:
    tokens = _tokens(pattern)
    return None if tokens is None else _compiled(tokens, True)


def _compiled(tokens: list[str], greedy: bool) -> str:
    star = ".*" if greedy else ".*?"
    return "".join(star if t == "*" else "." if t == "?" else re.escape(t[1]) for t in tokens)


def _prefix(tokens: list[str], value: str, longest: bool) -> str:
    """``value`` less its shortest / longest prefix that matches (none: as it is)."""
    m = re.match(_compiled(tokens, longest), value, re.S)
    return value[m.end():] if m is not None else value


def apply(op: tuple[str, str, str], value: str) -> str | None:
    """``value`` with the operator applied, as bash does; None: not computed here."""
    kind, pattern, rep = op
    if kind in _CASE:
        return _case(kind, pattern, value)
    tokens = _tokens(pattern)
    if tokens is None or len(value) > MAX_TEXT:
        return None
    if kind in ("#", "##"):
        return _prefix(tokens, value, kind == "##")
    if kind in ("%", "%%"):         # a suffix: the prefix of the reversed text
        return _prefix(tokens[::-1], value[::-1], kind == "%%")[::-1]
    rx = re.compile(_compiled(tokens, True), re.S)
    if not pattern or rx.fullmatch(""):
        return None if pattern else value     # a pattern matching nothing: not read here
    # the longest match at the first place it matches, as bash (greedy `.*` ends last)
    return rx.sub(lambda _: rep, value, count=1 if kind == "/" else 0)


def _case_pattern(pattern: str) -> bool:
    """A case-modification pattern read here: none (every letter), ``?`` / ``*`` (the same) or
    one literal character (that letter only); a class, a quote, an expansion: not read."""
    tokens = _tokens(pattern)
    return tokens is not None and len(tokens) <= 1


def _case(kind: str, pattern: str, value: str) -> str | None:
    """``${X,,}`` / ``${X^^}`` (every character), ``${X,}`` / ``${X^}`` (the first only), each
    changed where it matches ``pattern`` (bash: a pattern matching one character at a time)."""
    if len(value) > MAX_TEXT or not value.isascii() or not _case_pattern(pattern):
        return None
    tokens = _tokens(pattern) or ["*"]
    ok = (lambda c: True) if tokens[0] in "*?" else (lambda c: c == tokens[0][1])
    change = str.lower if kind[0] == "," else str.upper
    if len(kind) == 1:
        return (change(value[0]) if ok(value[0]) else value[0]) + value[1:] if value else value
    return "".join(change(c) if ok(c) else c for c in value)
