"""Quotes and ``$`` in a launch script, for :mod:`.shellwords`: ``'...'``, ``"..."``,
``$'...'``, ``$NAME``, ``${NAME:-default}`` (defaults holding references or quotes are split
like words, 8 levels deep at most), ``${NAME[@]}``, and the parts only the running shell knows
(``$(...)``, ``$((...))``, backquotes, positional parameters) kept as opaque references
(positional ones marked ``Part.param``: a caller's words bind them, :mod:`.shellargs`).
Here-document bodies are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from preflight.base.digits import ascii_digits
from preflight.reading import shelldir, shellparam
from preflight.reading.shell import HereDoc
from preflight.reading.shelltypes import Part

_PWD = re.compile(r"[ \t]*pwd(?:[ \t]+-[LP])?[ \t]*")
"""``$(pwd)`` / `` `pwd` ``: the folder the command runs in, as ``$PWD`` (bash(1): ``pwd``
prints ``$PWD`` when it names the current folder)."""

_NAME = re.compile(r"[A-Za-z_]\w*")
_PLAIN_DQ = re.compile(r'[^"\\$`]+')
_PLAIN_HERE = re.compile(r"[^\\$`\n]+")


class QuoteScanner:
    """Mixin of the lexer: the methods that read quoted text and ``$`` references."""

    text: str
    n: int
    i: int
    depth: int
    heredocs: list[str | HereDoc]

    def add_lit(self, ch: str, at: int, quoted: bool) -> None:
        raise NotImplementedError

    def flush_lit(self) -> None:
        raise NotImplementedError

    def add_part(self, part: Part) -> None:
        raise NotImplementedError

    def single(self) -> None:
        j = self.text.find("'", self.i + 1)
        end = self.n if j == -1 else j
        if end == self.i + 1:
            self.flush_lit()
            self.add_part(Part("", self.i, quoted=True))
        if end > self.i + 1:
            self.add_lit(self.text[self.i + 1:end], self.i + 1, True)
        self.i = end + 1

    def ansi_c(self) -> None:
        """``$'...'`` at ``self.i``: its text with ``\\n``, ``\\'``, ``\\xHH`` ... decoded as
        bash decodes them (a ``\\'`` does not end it; bash 5.2 manual, ANSI-C Quoting)."""
        start = self.i + 2
        j = start
        while j < self.n and self.text[j] != "'":
            j += 2 if self.text[j] == "\\" else 1
        end = min(j, self.n)
        body = ansi_c(self.text[start:end])
        if body:
            self.add_lit(body, start, True)
        else:
            self.flush_lit()
            self.add_part(Part("", start, quoted=True))
        self.i = end + 1

    def double(self) -> None:
        text, n = self.text, self.n
        i = self.i + 1
        empty = True
        while i < n and text[i] != '"':
            c = text[i]
            empty = False
            if c == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
                if text[i + 1] != "\n":
                    self.add_lit(text[i + 1], i + 1, True)
                else:   # the text after a `\`-newline starts a piece of its own, so what is
                    self.flush_lit()    # read there keeps its line (Pai's option strings)
                i += 2
            elif c == "$":
                self.i = i
                self.dollar(quoted=True)
                i = self.i
            elif c == "`":
                self.i = i
                self.backquote()
                i = self.i
            else:
                m = _PLAIN_DQ.match(text, i)
                end = m.end() if m and m.end() > i else i + 1
                self.add_lit(text[i:end], i, True)
                i = end
        if empty:
            self.flush_lit()
            self.add_part(Part("", self.i, quoted=True))
        self.i = i + 1

    def cat_here(self, quoted: bool) -> bool:
        """``$(cat <<EOF ...)`` read as its text (the lexer's; False: not one)."""
        return False

    def dollar(self, quoted: bool) -> None:
        text, i = self.text, self.i
        nxt = text[i + 1] if i + 1 < self.n else ""
        if nxt == "(" and self.cat_here(quoted):
            return
        if nxt == "'" and not quoted:                      # $'...': bash's escapes
            self.ansi_c()
            return
        if nxt == "(":
            end = _matching(text, i + 1)
            what = "arithmetic" if text.startswith("((", i + 1) else "command substitution"
            self.flush_lit()
            if what != "arithmetic" and text[end - 1:end] == ")" and \
                    _PWD.fullmatch(text, i + 2, end - 1):
                # `$(pwd)` is `$PWD` (shell15: the walk of shellcalls knows the folder)
                self.add_part(Part("PWD", i, var=True, quoted=quoted))
                self.i = end
                return
            # `$(cd "$(dirname "$0")" && pwd)`: the script's folder (reading/shelldir.py)
            got = None if what == "arithmetic" else \
                shelldir.substitution(text, i, end, quoted, self.depth, type(self))
            if got is not None:
                self.add_part(got)
                self.i = end
                return
            # the text stands in for the value: it must stay one plain word when a `bash -c`
            # string holding it is split again
            self.add_part(Part("$(...)", i, var=True, quoted=quoted,
                               opaque=f"{what} {text[i:end][:60]!r} is computed at run time"))
            self.i = end
            return
        if nxt == "{":
            end = _brace_end(text, i + 2)
            self.flush_lit()
            self.add_part(braced(text[i + 2:end], i, quoted, self.depth, type(self)))
            self.i = end + 1
            return
        m = _NAME.match(text, i + 1)
        if m:
            self.flush_lit()
            self.add_part((m.group(0) == "BASH_SOURCE" and shelldir.script_part(
                m.group(0), i, quoted)) or Part(m.group(0), i, var=True, quoted=quoted))
            self.i = m.end()
            return
        if nxt and (ascii_digits(nxt) or nxt in "@*#?$!-"):
            self.flush_lit()
            # `$1`, `"$@"`, `$*`, `$#`: bound when a script of the job runs this one with its
            # arguments (reading/shellargs.py); `$0`, `$?`, `$$`, `$!`, `$-` never are
            param = nxt if nxt in "@*#" or nxt in "123456789" else None
            self.add_part((nxt == "0" and shelldir.script_part("0", i, quoted)) or Part(
                "$" + nxt, i, var=True, quoted=quoted, array=nxt == "@",
                opaque=f"${nxt} is given when the script is run", param=param))
            self.i = i + 2
            return
        self.add_lit("$", i, quoted)
        self.i = i + 1

    def backquote(self) -> None:
        j = self.text.find("`", self.i + 1)
        end = self.n if j == -1 else j + 1
        self.flush_lit()
        if j != -1 and _PWD.fullmatch(self.text, self.i + 1, j):
            self.add_part(Part("PWD", self.i, var=True))
            self.i = end
            return
        self.add_part(Part("`...`", self.i, var=True,
                           opaque="a `...` command substitution is computed at run time"))
        self.i = end

    def here_body(self, doc: HereDoc) -> None:
        """The parts of a here-document's body (the text a variable takes: :mod:`.shellheredoc`),
        as bash expands it (:func:`here_chars`): ``$`` and backquote expansions read as in
        ``"..."``, each literal character at its offset."""
        here_chars(self.text, doc, lambda chars, at: self.add_lit(chars, at, True),
                   self.flush_lit, self._here_expansion)
        self.flush_lit()

    def _here_expansion(self, at: int) -> int:
        """The ``$`` or backquote expansion at ``at`` of a body read; where it ends."""
        self.i = at
        if self.text[at] == "$":
            self.dollar(quoted=True)
        else:
            self.backquote()
        return self.i

    def skip_heredocs(self) -> None:
        for delimiter in self.heredocs:
            if isinstance(delimiter, HereDoc):    # found by reading/shell.py, as bash does
                self.i = max(self.i, delimiter.end)
                continue
            while self.i < self.n:
                j = self.text.find("\n", self.i)
                line = self.text[self.i:self.n if j == -1 else j]
                self.i = self.n if j == -1 else j + 1
                if line.strip("\t") == delimiter:
                    break
        self.heredocs = []


def _brace_end(text: str, start: int) -> int:
    """Offset of the ``}`` closing a ``${`` whose name starts at ``start`` (nested ones too)."""
    depth = 1
    i = start
    while i < len(text):
        c = text[i]
        if c == "}":
            depth -= 1
            if depth == 0:
                return i
        elif c == "$" and text.startswith("{", i + 1):
            depth += 1
            i += 1
        elif c == "\n":
            return i             # bash would refuse it; stop at the line's end
        i += 1
    return len(text) - 1


def braced(inner: str, at: int, quoted: bool, depth: int, lexer_class: Any) -> Part:
    """``${NAME}``, ``${NAME:-default}``, ``${NAME[@]}``; anything else is opaque. A default
    holding references (``${A:-${B}/x}``, ``${1:-${ROOT}/x}``) keeps them as parts, nested at
    most 8 deep (deeper: a run-time value, never its text)."""
    got = shelldir.script_part(inner, at, quoted)      # `${BASH_SOURCE[0]}`, `${0%/*}`
    if got is not None:
        return got
    p = re.fullmatch(r"([1-9]\d{0,5}|[@*#])(?:(:?-)(.*)|:(\d{1,6})(?::(\d{1,6}))?)?", inner,
                     re.S)
    if p and not (p.group(1) == "#" and p.group(2)) and not (
            p.group(4) is not None and p.group(1) not in "@*"):
        # `${1}`, `${12}`, `${1:-default}`, `${@}`, `${@:2}`, `${*:2:3}`, `${#}`: positional
        # parameters (reading/shellargs.py); a default holding references is split like a word
        # (holdout13: XTuner examples/v1/scripts/run_sft.sh:14 `${1:-${REPO_ROOT}/...}`)
        parts = _default(p.group(3), at + 2 + p.start(3), quoted, depth, lexer_class) \
            if p.group(3) is not None and p.group(1) not in "@*#" else ()
        default = p.group(3) if p.group(3) is not None and not any(
            c in p.group(3) for c in "$'\"\\`") else "" if parts else None
        if p.group(2) is not None and default is None:
            return Part("${" + inner[:60] + "}", at, var=True, quoted=quoted,
                        opaque=f"${{{inner[:60]}}} is computed at run time")
        span = (int(p.group(4)), int(p.group(5)) if p.group(5) is not None else None) \
            if p.group(4) is not None else None
        return Part("$" + p.group(1), at, var=True, quoted=quoted, default=default,
                    default_parts=parts, array=p.group(1) == "@", param=p.group(1), span=span,
                    unset_only=p.group(2) == "-",
                    opaque=f"${{{inner[:60]}}} is given when the script is run")
    m = re.fullmatch(r"([A-Za-z_]\w*)(?:\[([@*])\])?(?:(:?-)(.*))?", inner, re.S)
    if m:
        default = m.group(4)
        # a default with references or quotes (``${A:-"x y"}``) is split like a word
        parts = _default(default, at + 2 + m.start(4), quoted, depth, lexer_class) \
            if default is not None else ()
        if default is not None and not parts and any(c in default for c in "$'\"\\`"):
            return Part("${" + inner[:60] + "}", at, var=True, quoted=quoted,
                        opaque=f"${{{inner[:60]}}} nests defaults more than 8 deep")
        return Part(m.group(1), at, var=True, default=default, default_parts=parts,
                    array=bool(m.group(2)), quoted=quoted, unset_only=m.group(3) == "-")
    m = re.fullmatch(r"([A-Za-z_]\w*):?\?.*", inner, re.S)
    if m:
        # ``${CONFIG:?set CONFIG}``: the variable's value where it is set (a caller's prefix,
        # ``CONFIG=x sbatch run.slurm``); unset, the shell stops the script, so it is read as
        # a plain ``$CONFIG`` (holdout23 Lambda gb300: was "computed at run time")
        return Part(m.group(1), at, var=True, quoted=quoted)
    op = shellparam.parse(inner)        # `${X%.sh}`, `${X/a/b}`: from X where it is known
    return Part("${" + inner[:60] + "}", at, var=True, quoted=quoted,
                opaque=f"${{{inner[:60]}}} is computed at run time",
                op=(op[0], *op[1]) if op else None)


def _default(default: str, start: int, quoted: bool, depth: int, lexer_class: Any
             ) -> tuple[Part, ...]:
    """A ``${X:-default}``'s default split like a word (``${A:-${B}/x}``, ``${A:-"x y"}``);
    () when it is plain text or nested more than 8 deep."""
    if not any(c in default for c in "$'\"\\`") or depth >= 8:
        return ()
    lexer = lexer_class(default, depth + 1)
    lexer.lit_quoted = quoted
    lexer.run()
    words = [p for st in lexer.out.statements for w in st.words for p in w]
    return shelldir.moved(tuple(replace(p, quoted=quoted) for p in words), start)


def _matching(text: str, open_at: int) -> int:
    """Offset just past the ``)`` that closes the ``(`` at ``open_at`` (or the end)."""
    depth = 0
    i = open_at
    while i < len(text):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c in "'\"":
            j = text.find(c, i + 1)
            i = len(text) if j == -1 else j
        i += 1
    return len(text)


def here_chars(text: str, doc: HereDoc, lit: Callable[[str, int], None], cut: Callable[[], None],
               expansion: Callable[[int], int]) -> None:
    """A here-document's body as bash reads it, for :meth:`QuoteScanner.here_body` (its parts)
    and :func:`.shellheredoc.body` (its text): literally when its delimiter was quoted; else
    ``\\``-newline removed and ``\\`` escaping only ``$`` ````` ``\\`` (quotes are
    literal). ``<<-`` removes each line's leading tabs (here also after a ``\\``-newline,
    where bash 5 keeps them: an xfail test in tests/reading/test_shellheredoc.py).

    ``lit(chars, offset)``: literal characters, contiguous in ``text`` from ``offset``;
    ``cut()``: what comes next is not contiguous with what came before (a tab or backslash
    left out); ``expansion(offset)``: a ``$`` or backquote at ``offset`` (unquoted delimiter
    only), which returns where reading goes on."""
    i, end = doc.start, doc.body_end if doc.body_end >= 0 else doc.end
    line_start = True
    while i < end:
        c = text[i]
        if line_start and doc.strip_tabs and c == "\t":
            cut()
            i += 1
            continue
        line_start = False
        if doc.quoted:
            j = text.find("\n", i, end)
            j = end if j < 0 else j + 1
            lit(text[i:j], i)
            i, line_start = j, True
        elif c == "\\" and i + 1 < end and text[i + 1] in "\n$`\\":
            cut()                  # a part's characters are contiguous in the script
            if text[i + 1] != "\n":
                lit(text[i + 1], i + 1)
                cut()
            i += 2
            line_start = text[i - 1] == "\n"
        elif c in "$`":
            i = expansion(i)
        elif c == "\n":
            lit("\n", i)
            i, line_start = i + 1, True
        else:
            m = _PLAIN_HERE.match(text, i, end)
            j = m.end() if m and m.end() > i else i + 1
            lit(text[i:j], i)
            i = j


_ANSI = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
         "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI_ESC = re.compile(r"\\(?:([abeEfnrtv\\'\"?])|x([0-9A-Fa-f]{1,2})|([0-7]{1,3})|"
                       r"u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|c(.))", re.DOTALL)


def ansi_c(raw: str) -> str:
    """The text of ``$'raw'`` as bash decodes it; an escape it does not know stays as written."""
    def one(m: re.Match[str]) -> str:
        simple, hx, octal, u4, u8, ctl = m.groups()
        if simple is not None:
            return _ANSI[simple]
        if ctl is not None:
            return chr(ord(ctl.upper()) ^ 0x40) if ctl != "?" else "\x7f"
        code = int(hx, 16) if hx else int(octal, 8) if octal else int(u4 or u8, 16)
        return chr(min(code, 0x10FFFF)) if not 0xD800 <= code <= 0xDFFF else "\ufffd"
    return _ANSI_ESC.sub(one, raw)
