"""Bash's declaration builtins in launch scripts: ``readonly``, ``declare``, ``typeset``,
``local`` and ``export``, with their options, as bash applies them to ``NAME=value``.

OpenRLHF's slurm wrapper (examples/scripts/train_nonrl_slurm.sh at v0.11.0) sets
``readonly training_script="train_dpo_llama.sh"`` and sources ``./${training_script}``; the kit
knew ``NAME=value`` after ``export``, ``local`` and ``declare -x`` only, so that script read alone
was no job (issue 22). What each option does to the value is bash's (bash 5.2 builtins/declare.def,
``declare_internal``; the manual's "Bash Builtins"; checked against bash in
tests/reading/test_shelldecl.py):

- ``-i``: the value is evaluated as arithmetic (``declare -i N=2*4`` is 8): a plain integer stays,
  anything else is decided by bash's arithmetic, so it is not known here;
- ``-l`` / ``-u``: the value is lower-cased / upper-cased;
- ``-n``: a name reference: ``$REF`` is the value of the variable it names;
- ``-x`` (and ``export``) exports; ``+x`` and ``export -n`` un-export (the value is still set);
- ``-p``, ``-f``, ``-F`` (and ``export -f``, ``readonly -f``) print or name functions: no
  variable is assigned;
- ``local`` outside a function is an error ("can only be used in a function"): nothing is set.

A ``-a`` / ``-A`` array, ``-r``, ``-t``, ``-g`` leave the value as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from preflight.reading.shelltypes import Part, Statement, Word, assignment

BUILTINS = frozenset({"declare", "typeset", "local", "export", "readonly"})
_FUNCTION = re.compile(r"(?m)^[ \t]*(?:function[ \t]+[\w.:-]+[ \t]*(?:\(\))?|[\w.:-]+[ \t]*\(\))"
                       r"[ \t]*\{?")
_INT = re.compile(r"[ \t]*[-+]?\d+[ \t]*")


@dataclass(frozen=True)
class Decl:
    """What a declaration builtin with its options does to ``NAME=value``."""

    builtin: str
    exported: bool | None = None     # True: exports; False: un-exports; None: as it was
    assigns: bool = True             # False: -p / -f / -F: no variable is set
    integer: bool = False            # -i: arithmetic
    case: str = ""                   # "lower" (-l) / "upper" (-u)
    nameref: bool = False            # -n

    def value(self, raw: str) -> str | None:
        """The value bash stores for ``NAME=raw`` (``raw`` literal, quotes removed); None when
        bash decides it at run time (arithmetic of anything but a plain integer)."""
        if self.integer:
            return str(int(raw)) if _INT.fullmatch(raw) and len(raw) < 100 else None
        if self.case == "lower":
            return raw.lower()
        if self.case == "upper":
            return raw.upper()
        return raw

    @property
    def plain(self) -> bool:
        """The value is stored as written."""
        return not (self.integer or self.case or self.nameref)


_VALID = {"export": "fnp", "readonly": "aAfp", "declare": "aAfFgiIlnprtux",
          "typeset": "aAfFgiIlnprtux", "local": "aAfFgiIlnprtux"}
"""Each builtin's options (bash 5.2 ``help``): any other is "invalid option", nothing is set."""


def parse(builtin: str, options: list[str]) -> Decl:
    """``declare -rx`` -> Decl: ``options`` are the words after the builtin that start with
    ``-`` or ``+`` (``--`` ends them)."""
    exported: bool | None = True if builtin == "export" else None
    integer = nameref = False
    case = ""
    assigns = True
    for word in options:
        if word == "--":
            break
        on = word[0] == "-"
        if any(flag not in _VALID.get(builtin, "") for flag in word[1:]):
            return Decl(builtin, None, False)
        for flag in word[1:]:
            if flag == "x":
                exported = on
            elif flag == "n" and builtin == "export":
                exported = False if on else exported
            elif flag in "pfF":
                assigns = assigns and not on
            elif flag == "i":
                integer = on
            elif flag == "l":
                case = "lower" if on else ("" if case == "lower" else case)
            elif flag == "u":
                case = "upper" if on else ("" if case == "upper" else case)
            elif flag == "n":
                nameref = on
    return Decl(builtin, exported, assigns, integer, case, nameref)


def split_options(words: list[str]) -> tuple[list[str], int]:
    """(the option words, index of the first other word) after a declaration builtin."""
    n = 0
    while n < len(words) and words[n][:1] in "-+" and len(words[n]) > 1:
        n += 1
        if words[n - 1] == "--":
            break
    return words[:n], n


def function_spans(text: str) -> list[tuple[int, int]]:
    """Rough extents of ``f() { ... }`` / ``function f { ... }`` bodies (to the next line that
    starts with ``}``): what they set runs only if called, and ``local`` works only there."""
    spans = []
    for m in _FUNCTION.finditer(text):
        end = _body_end(text, m.end(), m.group(0).endswith("{"))
        if end is None:
            close = re.compile(r"(?m)^[ \t]*\}").search(text, m.end())
            end = close.end() if close else len(text)
        spans.append((m.start(), end))
    return spans


_RESERVED = frozenset({"then", "do", "else", "elif", "!", "time", "{"})
MAX_BODY = 200_000
"""Characters scanned for a function body's closing brace (past them: the rough extent)."""


def _body_end(text: str, at: int, opened: bool) -> int | None:
    """redteam8: the end of a ``{ ... }`` body whose ``{`` is before ``at`` (``opened``) or the
    first ``{`` word after it: braces counted as bash reads them (a ``{`` word at a command's
    start, a ``}`` at one), outside quotes, comments and ``${...}``. A one-line ``f() { shift;
    }`` ended at the next line starting with ``}`` -- the rest of the script, whose ``"$@"``
    was then the function's. None: not found within :data:`MAX_BODY` characters."""
    depth, i, start, word = (1 if opened else 0), at, True, ""
    stop = min(len(text), at + MAX_BODY)
    while i < stop:
        c = text[i]
        if c == "\\":
            i, start, word = i + 2, False, "x"
            continue
        if c in "'\"":
            j = i + 1
            while j < stop and text[j] != c:
                j += 2 if c == '"' and text[j] == "\\" else 1
            i, start, word = j + 1, False, "x"
            continue
        if c == "#" and not word:
            j = text.find("\n", i)
            i = stop if j < 0 else j
            continue
        if c == "$" and text.startswith("{", i + 1):
            j = text.find("}", i)
            i, start, word = (stop if j < 0 else j + 1), False, "x"
            continue
        if c in " \t\n;&|()":
            if word in _RESERVED:
                start = True
            if c in "\n;&|(":
                start = True
            word = ""
            i += 1
            continue
        if not word and start and c in "{}" and (i + 1 >= len(text) or
                                                  text[i + 1] in " \t\n;&|)<>"):
            depth += 1 if c == "{" else -1
            if depth == 0:
                return i + 1
            i, word = i + 1, ""
            start = c == "{"
            continue
        if not word:
            start = False
        word += c
        i += 1
    return None


def function_names(text: str) -> list[str]:
    """The name of each body :func:`function_spans` finds, in the same order."""
    return [re.sub(r"^\s*(?:function\s+)?([\w.:-]+).*$", r"\1", m.group(0), flags=re.S)
            for m in _FUNCTION.finditer(text)]


def in_function(spans: list[tuple[int, int]], offset: int) -> bool:
    return any(a <= offset < b for a, b in spans)


def word(decl: Decl, value: Word, offset: int) -> Word:
    """The value word of ``declare -i/-l/-u/-n NAME=value`` as bash stores it, or one opaque
    part when bash computes it (arithmetic, or a part known only at run time)."""
    literal = None if any(p.var or p.opaque for p in value) else "".join(p.text for p in value)
    at = value[0].offset if value else offset
    if decl.nameref and literal and re.fullmatch(r"[A-Za-z_]\w*", literal):
        return (Part(literal, at, var=True),)
    got = decl.value(literal) if literal is not None and not decl.nameref else None
    if got is not None:
        return (Part(got, at),) if got else ()
    return (Part("", at, var=True, opaque=f"{decl.builtin} with -i, -l, -u or -n: bash "
                 "computes the value at run time"),)


def statements(decl: Decl, words: list[Word], branch: tuple[int, ...], subshell: list[int],
               ) -> list[Statement]:
    """``export A=1 B`` / ``declare -x A=1``: each name, set or not, goes to what the script runs
    (``exported``); ``export -n B`` / ``declare +x A=1``: no longer (``unexported``)."""
    out = []
    for one in words:
        got = assignment(one)
        if got is not None and not decl.plain:
            got = (got[0], got[1], word(decl, got[2], one[0].offset))
        out.append(Statement(
            ((got[2],) if got[2] else ()) if got else (one,), one[0].offset, branch,
            got[0] if got else None, got[1] if got else False, exported=bool(decl.exported),
            unexported=decl.exported is False, subshell=tuple(subshell)))
    return out
