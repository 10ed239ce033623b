"""Names computed from the script's own path in launch scripts (issue 22): ``$(basename W
[SUFFIX])`` and ``$(echo W | sed 's/a/b/')``, read as bash computes them. Nothing is run.

Every NeMo-RL test-suite script sources tests/test_suites/llm/common.env, which names the run and
its config after the script that sources it (NVIDIA-NeMo/RL @ 0a769cc3553a, common.env:23,33):
``EXP_NAME=$(basename $0 .sh)`` and ``CONFIG_PATH=$(echo $SCRIPT_DIR/${EXP_NAME}.yaml | sed
's#tests/test_suites#examples/configs/recipes#')``; the script then runs ``--config
$CONFIG_PATH``. Read as a run-time value, the recipe was never read (holdout17, issue 1368).

The lexer (:mod:`.shelldir`'s ``substitution``) hands the ``$( ... )`` here; a form read gives a
:class:`~.shelltypes.Part` whose ``folder`` holds the operation (``basename`` with its suffix,
``sed`` with its one literal ``s`` command) and its argument word. :func:`evaluate` applies it
where the evaluator knows the script's path (:data:`SELF`, and :data:`~.shelldir.RUNS` for
``$0``: in a sourced file, the sourcing script's), so the script's folder and name are real text
before ``sed`` edits them, as in bash. Only the simple literal forms are read: a sed script with
another command, a regular expression beyond literal text and ``.``, ``&`` or a group in the
replacement, flags other than ``g``, ``echo`` with options or more than one word, a pipeline into
anything but one ``sed``: the value stays unknown, with the reason. What ``sed`` gives is a path
like any other: a reader that opens it checks it against the job's boundary.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable
from typing import Any

from preflight.reading.shelltypes import Field, Part, Word

SELF = "@self"
"""Key of the evaluator's outer variables that holds the path of the file the text is written
in (``${BASH_SOURCE[0]}``); no shell variable can have this name."""

MAX_TEXT = 4096
"""Characters of the text ``basename`` / ``sed`` read (a path: under 300)."""

_SEP = "\x00"       # between the operation's name and its operands in Part.folder[0]
_MARK = re.compile("(\x01(?:script|run)-folder)(\x01P)?(/\x02)?")
_FIRST = re.compile(r"\s*(basename|echo)\b")


def substitution(inner: str, start: int, quoted: bool, depth: int,
                 lexer: Callable[[str, int], Any]) -> Part | None:
    """``$(basename W [S])`` / ``$(echo W | sed 'SCRIPT')`` (``inner``: what the parentheses
    hold, at ``start + 2``) as an operation, an unknown value with the reason, or None: another
    command."""
    m = _FIRST.match(inner)
    if m is None:
        return None
    shown = f"command substitution '$({inner[:60]})'"
    parts = _pipeline(inner)
    if parts is None:
        return _unknown(start, quoted, f"{shown}: a pipeline or list bash runs")
    statements = [lexer(p, depth + 1).run().statements for p, _ in parts]
    if any(len(s) != 1 or s[0].assign or s[0].test for s in statements):
        return None
    first = statements[0][0].words
    names = [_text(w) for w in first]
    if names[0] != m.group(1):
        return None               # `basename-x`, `echo_all`: another command
    if m.group(1) == "basename" and len(parts) == 1:
        args, given = first[1:], names[1:]
        if given[:1] == ["--"]:
            args, given = args[1:], given[1:]
        elif given[:1] != [None] and (given[0] or "").startswith("-"):
            return _unknown(start, quoted, f"{shown}: basename with options")
        if not 1 <= len(args) <= 2:
            return _unknown(start, quoted, f"{shown}: basename with options or other arguments")
        suffix = _text(args[1]) if len(args) == 2 else ""
        if suffix is None:
            return _unknown(start, quoted, f"{shown}: the suffix is a run-time value")
        return _op("basename" + _SEP + suffix, args[0], start, quoted, shown)
    if m.group(1) != "echo" or len(parts) != 2:
        return None if m.group(1) == "echo" and len(parts) == 1 else \
            _unknown(start, quoted, f"{shown}: a pipeline bash runs")
    if len(first) != 2 or (names[1] or "").startswith("-"):
        return _unknown(start, quoted, f"{shown}: echo with options or more than one word")
    script = _sed(statements[1][0].words)
    if isinstance(script, str):
        return _unknown(start, quoted, f"{shown}: {script}")
    return _op("sed" + _SEP + _SEP.join(script), first[1], start, quoted, shown)


def _op(name: str, word: Word, start: int, quoted: bool, shown: str) -> Part:
    from preflight.reading.shelldir import moved

    return Part("$(...)", start, var=True, quoted=quoted, folder=(name, moved(word, start + 2)),
                opaque=f"{shown} is computed at run time")


def _unknown(start: int, quoted: bool, why: str) -> Part:
    return Part("$(...)", start, var=True, quoted=quoted, opaque=f"{why}: computed at run time")


def _text(word: Word) -> str | None:
    return "".join(p.text for p in word) if all(not p.var for p in word) else None


def _pipeline(inner: str) -> list[tuple[str, int]] | None:
    """``inner`` cut at its top-level ``|`` (quotes and nested ``( )`` skipped), each piece
    with where it starts; None: another operator (``||``, ``&&``, ``;``, ``&``, a newline)."""
    pieces, depth, at, i, quote = [], 0, 0, 0, ""
    while i < len(inner):
        c = inner[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c == "\\":
            i += 1
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and c in "|;&\n" and inner[i - 1:i] != ">" and inner[i + 1:i + 2] != ">":
            if c != "|" or inner[i + 1:i + 2] in ("|", "&"):
                return None
            pieces.append((inner[at:i], at))
            at = i + 1
        i += 1
    return [*pieces, (inner[at:], at)] if not quote else None


def _sed(words: list[Word]) -> tuple[str, str, str] | str:
    """``sed [-e] 's<d>PAT<d>REP<d>[g]'`` as (a Python pattern, the replacement, flags), or why
    it is not read."""
    names = [_text(w) for w in words]
    if names[:1] != ["sed"]:
        return "a pipeline into another command than sed"
    rest = names[2:] if names[1:2] == ["-e"] else names[1:]
    if len(rest) != 1 or rest[0] is None or rest[0].startswith("-"):
        return "sed with options, a script file or input files"
    script = rest[0].strip()
    if len(script) < 4 or script[0] != "s" or script[1] in "\\\n" or script[1].isalnum():
        return f"the sed script {script[:40]!r} is not one s command"
    d = script[1]
    fields: list[str] = []
    cur, i = "", 2
    while i < len(script) and len(fields) < 2:
        c = script[i]
        if c == "\\" and i + 1 < len(script):
            cur += c + script[i + 1]
            i += 2
            continue
        if c == d:
            fields.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    flags = script[i:].strip()
    if len(fields) != 2 or flags not in ("", "g"):
        return f"the sed script {script[:40]!r} is not one s command with the g flag or none"
    pattern, replacement = _pattern(fields[0], d), _replacement(fields[1], d)
    if pattern is None or replacement is None:
        return (f"the sed script {script[:40]!r} uses more than literal text (regular "
                "expression operators, & or groups)")
    return pattern, replacement, flags


def _pattern(raw: str, d: str) -> str | None:
    """A basic regular expression of literal characters and ``.`` (``\\.``, ``\\<d>``: the
    character) as a Python pattern, or None: any other operator."""
    out, i = "", 0
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            nxt = raw[i + 1:i + 2]
            if nxt not in (".", "/", d) or not nxt:
                return None
            if nxt == d and d in ".*[]^$":
                # GNU sed turns `\<d>` into a bare <d>, which is then an operator: with `.` as
                # the delimiter `\.` matches any character (sed 4.9: `s.a\.b.Y.` of axb: Y)
                if d != ".":
                    return None
                out += "."
                i += 2
                continue
            out += re.escape(nxt)
            i += 2
            continue
        if c in "*[]^$\n":
            return None
        out += "." if c == "." else re.escape(c)
        i += 1
    return out or None


def _replacement(raw: str, d: str) -> str | None:
    """The literal replacement text (``\\<d>``, ``\\&``, ``\\\\``: the character), or None."""
    out, i = "", 0
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            nxt = raw[i + 1:i + 2]
            if nxt not in (d, "&", "\\", "/") or not nxt:
                return None
            out += nxt
            i += 2
            continue
        if c in "&\n":
            return None
        out += c
        i += 1
    return out


def handles(part: Part) -> bool:
    """Whether ``part``'s operation is one of this module's."""
    return part.folder is not None and part.folder[0].split(_SEP)[0] in ("basename", "sed")


def evaluate(part: Part, expand: Callable[[Word], list[Field]], outer: dict[str, str]
             ) -> str | None:
    """The text ``basename`` / ``echo | sed`` gives, or None: not known here (the argument is
    a run-time value, the script's path is not known to the evaluator)."""
    from preflight.reading.shelldir import RUNS, field_text

    assert part.folder is not None
    ops, word = part.folder[0].split(_SEP), part.folder[1]
    fields = expand(word)
    found = field_text(fields[0], MAX_TEXT) if len(fields) == 1 else None
    if found is None:
        return None
    text = found
    script = outer.get(SELF)
    got = _settled(text, script, outer.get(RUNS) or script) if "\x01" in text else text
    if got is None:
        return None
    text = got
    if "\x01" in text or "\x02" in text or "\n" in text:
        return None
    unquoted = not all(p.quoted for p in word if p.var)
    if unquoted and re.search(r"[\s*?\[]", text):
        return None         # `basename $X`, `echo $X` word-split and glob: not this text
    if ops[0] == "basename":
        name = posixpath.basename(text.rstrip("/")) or ("/" if text.startswith("/") else "")
        suffix = ops[1]
        return name[:-len(suffix)] if suffix and name.endswith(suffix) and name != suffix \
            else name
    if text.startswith("-") or "\\" in text:
        return None         # echo takes `-n` / `-e` as options; backslashes: xpg_echo
    pattern, replacement, flags = ops[1], ops[2], ops[3]
    hits = len(re.findall(pattern, text)) if flags == "g" else 1
    if len(text) + hits * len(replacement) > MAX_TEXT:
        return None          # `s/./<2,000 characters>/g`: no path
    return re.sub(pattern, lambda _: replacement, text, count=0 if flags == "g" else 1)


def _settled(text: str, script: str | None, runs: str | None) -> str | None:
    """``text`` with the script's folder (and the script file after it) put in, as absolute
    paths; None: the evaluator does not know the script's path."""
    if script is None or runs is None:
        return None

    def put(m: re.Match[str]) -> str:
        whose = script if m.group(1) == "\x01script-folder" else runs
        full = os.path.abspath(whose)
        if m.group(3):
            return os.path.realpath(full) if m.group(2) else full
        folder = os.path.dirname(full)
        return os.path.realpath(folder) if m.group(2) else folder
    return _MARK.sub(put, text)
