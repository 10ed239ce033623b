"""Names a script sets other than by ``NAME=value``: arithmetic (``(( X++ ))``, ``let X=1``,
``$(( X += 1 ))``), ``read X``, ``printf -v X``, ``for X in``, ``getopts OPTS X``,
``mapfile X`` / ``readarray X``, ``${X:=default}``, ``unset X``.

redteam14 (session 41): ``F=0`` then ``(( F++ ))`` (or any of the above) and ``--fp8 $F`` on the
launch line was read as ``--fp8 0``, a confident FP8 "no": the readers took the one
``NAME=value`` line for the value and did not see the other ways bash sets a name (bash(1),
"ARITHMETIC EVALUATION", "SHELL BUILTIN COMMANDS", "Parameter Expansion"). Such a name's value
is not followed here: it is a run-time value with the line that sets it (:func:`side_set`).
Bounded: the text is scanned once by regular expressions without nested repetition.
"""

from __future__ import annotations

import re
from functools import lru_cache

MAX_CHARS = 1 << 20
"""Characters of a script scanned (the read limit of a file is 1 MiB)."""

_NAME = r"[A-Za-z_]\w*"
# `X++`, `++X`, `X--`, `X = 1`, `X += 1` (not `==`) inside `(( ))`, `$(( ))` or a `let` word
_ARITH_SET = re.compile(rf"(?:\+\+|--)[ \t]*\$?({_NAME})|({_NAME})[ \t]*(?:\+\+|--|"
                        r"(?:[-+*/%&|^]|<<|>>)?=(?!=))")
_ARITH = re.compile(r"\(\(([^\n]*?)\)\)")
_LET = re.compile(r"(?:^|[;&|({]|\bthen\b|\bdo\b|\belse\b)[ \t]*let[ \t]+([^\n;&|]*)", re.M)
_COMMANDS = re.compile(
    rf"(?:^|[;&|({{]|\bthen\b|\bdo\b|\belse\b|\bwhile\b|\buntil\b|\bif\b)[ \t]*(?:"
    rf"read((?:[ \t]+[^\s;&|<>()]+)+)|"       # every word: an option's value too (a guess)
    rf"printf[ \t]+-v[ \t]*({_NAME})|"
    rf"for[ \t]+({_NAME})[ \t]+in\b|"
    rf"getopts[ \t]+\S+[ \t]+({_NAME})|"
    rf"(?:mapfile|readarray)(?:[ \t]+-[A-Za-z]+(?:[ \t]+[^-\s]\S*)?)*[ \t]+({_NAME})|"
    rf"unset(?:[ \t]+-v)?((?:[ \t]+{_NAME})+))", re.M)
_HEREDOC = re.compile(r"[ \t]*\d?<<(?!<)")
_DEFAULT_SET = re.compile(rf"\$\{{({_NAME}):?=")


def side_set(text: str) -> dict[str, int]:
    """Each name ``text`` sets other than by ``NAME=value``, with the first line doing so."""
    return dict(_side_set(text[:MAX_CHARS]))


@lru_cache(maxsize=16)
def _side_set(text: str) -> tuple[tuple[str, int], ...]:
    """:func:`side_set`, kept per text (shell15: :func:`.shellvars.collect_variables` runs once
    per variable a reader looks up, each scanning the whole script again)."""
    found: dict[str, int] = {}

    def add(name: str | None, at: int) -> None:
        if name and name not in found:
            found[name] = text.count("\n", 0, at) + 1

    for m in _ARITH.finditer(text):
        for a in _ARITH_SET.finditer(m.group(1)):
            add(a.group(1) or a.group(2), m.start())
    for m in _LET.finditer(text):
        for a in _ARITH_SET.finditer(m.group(1)):
            add(a.group(1) or a.group(2), m.start())
    for m in _COMMANDS.finditer(text):
        names = m.group(1) or m.group(6)
        if m.group(1) and _HEREDOC.match(text, m.end()):
            continue        # `read -r -d '' CMD <<EOF`: the body (reading/shellheredoc.py)
        for name in (names.split() if names else [m.group(n) for n in (2, 3, 4, 5)]):
            if name and re.fullmatch(_NAME, name):
                add(name, m.start())
    for m in _DEFAULT_SET.finditer(text):
        add(m.group(1), m.start())
    _loose(text, found)
    return tuple(found.items())


_LOOSE = re.compile(rf"^[ \t]*(?:(?:export|local|declare|typeset|readonly)(?:[ \t]+[-+][A-Za-z]*)*"
                    rf"[ \t]+)?({_NAME})(?:\+=|=(\$\(|`)?)", re.M)


def _loose(text: str, found: dict[str, int]) -> None:
    """``F+=1`` (bash appends, or adds under ``declare -i``), ``F=$(( F + 1 ))``, ``F=$(cmd)``
    for a name assigned on a line before too: the ``NAME=value`` pattern reads neither (a name
    set once by ``$(...)`` is left to the readers that compute it, :mod:`.shelldir`)."""
    lines: dict[str, int] = {}
    loose: list[tuple[str, int]] = []
    for m in _LOOSE.finditer(text):
        name = m.group(1)
        if (m.group(2) or text.startswith("+=", m.end(1))) and lines.get(name):
            loose.append((name, m.start()))     # set again (`N=$(basename $0)` first: shelldir)
        lines[name] = lines.get(name, 0) + 1
    for name, at in loose:
        if name not in found:
            found[name] = text.count("\n", 0, at) + 1


_INLINE = re.compile(
    rf"(?:[;&|({{]|\)[ \t]|\bthen\b|\bdo\b|\belse\b)[ \t]*(?:(?:export|local|declare|typeset|readonly)"
    rf"(?:[ \t]+[-+][A-Za-z]+)*[ \t]+)?({_NAME})=(\"[^\"\n]*\"|'[^'\n]*'|[^\s;&|)]*)")


@lru_cache(maxsize=16)
def inline_set(text: str) -> tuple[tuple[str, str, int], ...]:
    """(name, value as written, line) of each ``NAME=value`` that is not the first word of its
    line: ``if A; then F=1; fi``, a ``case`` arm ``--fp8) F=1;;``, ``cd x && F=1``.

    shell15: the line-based ``NAME=value`` pattern of :mod:`.shellvars` sees only assignments
    that start a line, so ``F=0`` then ``case $1 in --fp8) F=1;; esac`` (the option loop of
    a script that parses its own arguments) read ``--fp8 $F`` as 0: a confident FP8 "no"."""
    # (comments blanked as shellvars.strip_comments does, offsets and lines kept)
    text = re.sub(r"(^|[ \t])#[^\n]*", lambda m: m.group(1) + " " * (len(m.group(0)) - len(
        m.group(1))), text[:MAX_CHARS], flags=re.M)
    return tuple((m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1)
                 for m in _INLINE.finditer(text))
