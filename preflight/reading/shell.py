r"""Is a launch script's quoting balanced? A cut-off or mis-quoted script never runs.

The flag readers (:mod:`.megatron`, :mod:`.launch`) look for ``--flag value`` tokens and do not
emulate bash, so a script truncated inside ``GPT_ARGS=( ...`` or with an unterminated ``"`` still
gave flags, and intent said "no FP8" for a job that bash refuses to start ("unexpected EOF while
looking for matching ``"``", "syntax error: unexpected end of file"). :func:`unterminated` finds
the first quote, ``(``, ``$(`` or backquote still open at the end of the file, in one pass.

It is deliberately partial: it knows single and double quotes (``$'...'`` with its escapes),
backslashes, comments, ``$(``/``(``/``)`` nesting (a ``)`` with no ``(``, as in ``case``
patterns, is ignored), ``((...))`` arithmetic, backquotes and here-documents (the insides of
both are skipped, as ``bash -n`` does). Anything it does not know can only make it *miss* an
error, not invent one on a script bash accepts; the fixtures and Megatron-LM's own example
scripts are the check of that.

The same pass finds every here-document (:func:`heredocs`) as bash reads them (issue 21 item 9:
``<<-EOF``, ``<<'EOF'``, ``<<"END X"``, ``<<\EOF`` and two on one line were read as the launch):
the delimiter is the next shell word after quote removal; the bodies of all the here-documents
opened on a line start after that line's first unquoted newline, in order; a body line ends the
document when it equals the delimiter (after leading tabs are removed, for ``<<-``), and when the
delimiter was not quoted a backslash-newline joins two body lines first, so ``x\`` over ``EOF``
ends nothing (POSIX.1-2017 XCU 2.7.4; bash 5.2 agrees, and tests/fuzz/test_fuzz_shell.py checks
this module against the bash on the test machine). :func:`blank_heredocs` blanks the bodies and
closing lines, so no reader takes a body's text (``python - <<EOF`` code, a generated config) for
the script's own commands; an unclosed one runs to the end of the file, as in bash.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache

# Ordinary characters and backslash escapes, skipped in C rather than one by one (800 KB of
# `\`-newlines took 0.8 s); newlines too unless a here-document body follows.
_PLAIN = re.compile(r"(?:[^\n'\"\\#$()`<]|\\[\s\S])*")
_PLAIN_NL = re.compile(r"(?:[^'\"\\#$()`<]|\\[\s\S])*")
_HEREDOC_OP = re.compile(r"<<(-?)[ \t]*")
# Characters that end a shell word (bash's shell metacharacters): the delimiter word stops there.
_WORD_END = frozenset(" \t\n;&|()<>")
_COMMENT_BEFORE = frozenset(" \t\n;&|()")
_WHAT = {"'": "a '...' string", '"': 'a "..." string', "(": "a (", "$(": "a $(",
         "`": "a `...` command"}


@dataclass(frozen=True)
class HereDoc:
    """One here-document: where its ``<<`` is and which characters are its body."""

    line: int              # 1-based line of the ``<<`` operator
    delimiter: str         # after quote removal, as bash compares it
    start: int             # offset of the body's first character
    end: int               # offset just past its closing line (or the end of the text)
    closed: bool           # False: no line ends it, bash takes the rest of the file
    at: int = -1           # offset of the ``<<`` operator
    quoted: bool = False   # part of the delimiter was quoted: the body is taken literally
    strip_tabs: bool = False   # ``<<-``: leading tabs of each body line are removed
    body_end: int = -1     # offset where the closing line starts (``end`` when unclosed)


def unterminated(text: str) -> tuple[str, int] | None:
    """``(what, line)`` of the first construct still open at the end of ``text``, or None."""
    return _scan(text)[0]


def heredocs(text: str) -> list[HereDoc]:
    """Every here-document of ``text``, in order, as bash reads them."""
    return list(_scan(text)[1]) if "<<" in text else []


def operator_end(text: str, at: int) -> int | None:
    """Offset just past the delimiter word of the ``<<`` operator at ``at`` (None: no word)."""
    op = _HEREDOC_OP.match(text, at)
    word = _delimiter_word(text, op.end()) if op is not None else None
    return word[2] if word is not None else None


def blank_heredocs(text: str, docs: list[HereDoc] | None = None) -> str:
    """``text`` with each here-document's body and closing line blanked (newlines kept, so
    every other line keeps its number): what is left is what bash would run as commands."""
    docs = heredocs(text) if docs is None else docs
    if not docs:
        return text
    out: list[str] = []
    at = 0
    for doc in docs:
        out += [text[at:doc.start], re.sub(r"[^\n]", " ", text[doc.start:doc.end])]
        at = doc.end
    out.append(text[at:])
    return "".join(out)


@lru_cache(maxsize=8)
def _scan(text: str) -> tuple[tuple[str, int] | None, tuple[HereDoc, ...]]:
    """The first construct still open at the end (or None), and the here-documents read (kept
    for the last few texts: a script is checked, blanked, split and read for its values)."""
    problem, found = _scan_text(text)
    return problem, tuple(found)


def _scan_text(text: str) -> tuple[tuple[str, int] | None, list[HereDoc]]:
    stack: list[tuple[str, int]] = []          # (what, offset where it opened)
    heredocs: list[tuple[str, bool, bool, int]] = []   # pending: delimiter, <<-, quoted, offset
    found: list[HereDoc] = []
    word_goes_on = -2      # offset of a `)` closing `$(`: a `#` right after it is no comment
    i, n = 0, len(text)
    closes = _Parens()              # filled on the first $((: offset of each ( -> its )
    while i < n:
        top = stack[-1][0] if stack else ""
        if top == "'":                         # nothing escapes inside '...'
            j = text.find("'", i)
            if j == -1:
                break
            stack.pop()
            i = j + 1
            continue
        m = (_PLAIN if heredocs else _PLAIN_NL).match(text, i)   # matches, maybe empty
        i = m.end() if m else i
        if i >= n:
            break
        c = text[i]
        if c == "\n":                          # only with a here-document pending
            i += 1
            if top != '"':
                i = _skip_heredocs(text, i, heredocs, found)
                heredocs.clear()
            continue
        if c == "`":
            # bash finds the closing backquote textually and parses what is inside only when it
            # runs it (bash -n accepts "`'`"), so the inside is skipped, not checked
            j = _backquote_end(text, i + 1)
            if j < 0:
                stack.append(("`", i))
                break
            i = j + 1
            continue
        if top == '"':
            i = _in_string(text, i, stack, closes)
            if i < 0:
                return None, found
            continue
        # unquoted, or inside $( ... ) / ( ... )
        if c == "#" and _word_starts(text, i) and i - 1 != word_goes_on:
            j = text.find("\n", i)
            i = n if j == -1 else j
            continue
        if c == "$" and text.startswith("'", i + 1):          # $'...': backslash escapes
            j = _ansi_c_end(text, i + 2)
            if j < 0:
                stack.append(("'", i))
                break
            i = j + 1
            continue
        j = _arithmetic(text, i, closes)
        if j < 0:
            # `$((` that is not arithmetic: bash then re-reads it as $( (...) ... ) by rules
            # this checker does not model (bash -n accepts "$(()#)" and "$(()# c'm\n($')",
            # refuses "$(()#()"). It may miss an error, never invent one: stop, report nothing.
            return None, found
        if j:
            # bash matches the parentheses only, quotes are literal; a `#` right after the
            # `))` of `$((...))` is part of the word, no comment
            word_goes_on = j - 1 if c == "$" else word_goes_on
            i = j
            continue
        i, closed = _opener_or_closer(text, i, top, stack, heredocs)
        if closed:
            word_goes_on = closed
    if heredocs:       # opened on the last line, which has no newline: empty bodies
        i = _skip_heredocs(text, n, heredocs, found)
    if not stack:
        return None, found
    what, where = stack[0]
    return (_WHAT[what], text.count("\n", 0, where) + 1), found


def _in_string(text: str, i: int, stack: list[tuple[str, int]], closes: _Parens) -> int:
    """Past the character at ``i`` inside a "..." string: its end, a ``$(`` opened, or a whole
    ``$((...))`` (-1: one that does not close as arithmetic, as outside)."""
    c = text[i]
    if c == '"':
        stack.pop()
    elif c == "$" and text.startswith("((", i + 1):
        # `"$((#))"`: arithmetic inside a "..." string is read as a whole, as outside
        # (hypothesis, session 43: its `#` was taken for a comment, an open string)
        return _arithmetic(text, i, closes)
    elif c == "$" and text.startswith("(", i + 1):
        stack.append(("$(", i))
        i += 1
    return i + 1


def _arithmetic(text: str, i: int, closes: _Parens) -> int:
    """Offset past ``$((...))`` or an arithmetic command ``((...))`` starting at ``i`` (whose
    ``<<`` is a shift, not a here-document); 0 when there is none; -1 for a ``$((`` that does
    not close as arithmetic."""
    if text.startswith("$((", i):
        return _arith_end(text, i + 1, closes)
    if text.startswith("((", i) and _word_starts(text, i):
        return max(_arith_end(text, i, closes), 0)   # else a subshell in a subshell: ( (x) )
    return 0


def _ansi_c_end(text: str, j: int) -> int:
    """Offset of the ``'`` closing a ``$'...'`` whose body starts at ``j`` (backslash escapes
    inside), or -1."""
    n = len(text)
    while j < n and text[j] != "'":
        j += 2 if text[j] == "\\" else 1
    return j if j < n else -1


def _opener_or_closer(text: str, i: int, top: str, stack: list[tuple[str, int]],
                      heredocs: list[tuple[str, bool, bool, int]]) -> tuple[int, int]:
    """An unquoted quote, parenthesis or here-document operator at ``i``: update the stack (or
    the pending here-documents) and return where to go on, and the offset of a ``)`` that closed
    a ``$(`` (0 for none: a ``#`` right after it is no comment)."""
    c = text[i]
    if c in "'\"":
        stack.append((c, i))
    elif c == "(":
        stack.append(("$(" if i and text[i - 1] == "$" else "(", i))
    elif c == ")" and top in ("(", "$("):
        stack.pop()
        if top == "$(":
            return i + 1, i
    elif c == "<" and text.startswith("<<<", i):
        return i + 3, 0                        # a here-string, not a here-document
    elif c == "<" and text.startswith("<<", i):
        op = _HEREDOC_OP.match(text, i)
        assert op is not None
        word = _delimiter_word(text, op.end())
        if word is not None:
            delimiter, quoted, end = word
            heredocs.append((delimiter, op.group(1) == "-", quoted, i))
            return end, 0
        return op.end(), 0
    return i + 1, 0


def _delimiter_word(text: str, j: int) -> tuple[str, bool, int] | None:
    """The word after ``<<``: ``(delimiter after quote removal, whether any of it was quoted,
    offset past it)``, or None when there is no word (bash: a syntax error)."""
    out: list[str] = []
    quoted = False
    n = len(text)
    while j < n and text[j] not in _WORD_END:
        c = text[j]
        if c == "\\":
            if text.startswith("\n", j + 1):          # a line continuation: removed
                j += 2
                continue
            quoted = True
            out.append(text[j + 1:j + 2])
            j += 2
        elif c == "'" or (c == "$" and text.startswith("'", j + 1)):
            k = j + (2 if c == "$" else 1)
            close = _ansi_c_end(text, k) if c == "$" else text.find("'", k)
            if close < 0:
                return None
            out.append(text[k:close])
            quoted, j = True, close + 1
        elif c == '"':
            k = j + 1
            while k < n and text[k] != '"':
                if text[k] == "\\" and k + 1 < n and text[k + 1] in '"\\$`\n':
                    out.append("" if text[k + 1] == "\n" else text[k + 1])
                    k += 2
                    continue
                out.append(text[k])
                k += 1
            if k >= n:
                return None
            quoted, j = True, k + 1
        else:
            out.append(c)
            j += 1
    return ("".join(out), quoted, j) if out or quoted else None


_PAREN = re.compile(r"\\[\s\S]|[()'\"]")


class _Parens:
    """Every ``(`` of a text matched to its ``)``, and where its quotes are (built once)."""

    def __init__(self) -> None:
        self.closes: dict[int, int] | None = None
        self.quotes: list[int] = []           # offsets of unescaped ' and "

    def build(self, text: str) -> dict[int, int]:
        if self.closes is None:
            self.closes = {}
            opened: list[int] = []
            for m in _PAREN.finditer(text):
                c = m.group(0)
                if c == "(":
                    opened.append(m.start())
                elif c == ")" and opened:
                    self.closes[opened.pop()] = m.start()
                elif c in "'\"":
                    self.quotes.append(m.start())
        return self.closes


def _arith_end(text: str, i: int, parens: _Parens) -> int:
    """Offset just after the ``))`` closing a ``$((`` whose first ``(`` is at ``i``, or -1.

    Every ``(`` is matched in one pass over the text, the first time one is needed (a scan per
    ``$((`` made ``$((`` repeated 30,000 times take minutes). bash 5.2 reads quotes inside
    ``$((...))`` / ``((...))`` (``$(("))"))`` and ``$(( '))' ))`` are valid, ``$(( ' ))`` is
    not): where a quote falls inside the span the parentheses give, that span may not be the
    arithmetic bash reads, so -1 (the checker then reports nothing rather than invent an error:
    redteam3's hypothesis example)."""
    closes = parens.build(text)
    outer = closes.get(i, -1)
    if not (outer > 0 and closes.get(i + 1) == outer - 1):
        return -1
    if bisect.bisect_left(parens.quotes, outer) > bisect.bisect_right(parens.quotes, i):
        return -1
    return outer + 1


def _backslashes_before(text: str, k: int) -> int:
    """How many backslashes end just before offset ``k``."""
    j = k
    while j > 0 and text[j - 1] == "\\":
        j -= 1
    return k - j


def _word_starts(text: str, i: int) -> bool:
    """Whether a word starts at ``i`` (after a blank or an operator that is not escaped).

    A backslash-newline is a line continuation that bash removes before it splits words, so
    ``x \\<newline># c`` is ``x # c`` (a comment) and ``x\\<newline># c`` is ``x# c`` (not one):
    what counts is the character before the continuation (hypothesis found the first case)."""
    prev = i - 1
    while prev >= 1 and text[prev] == "\n" and _backslashes_before(text, prev) % 2 == 1:
        prev -= 2                     # skip the "\\\n" continuation
    if prev < 0:
        return True
    if text[prev] not in _COMMENT_BEFORE:
        return False
    return _backslashes_before(text, prev) % 2 == 0


def _backquote_end(text: str, i: int) -> int:
    """Index of the backquote closing one opened before ``i`` (``\\``` escapes), or -1."""
    while True:
        j = text.find("`", i)
        if j < 0:
            return -1
        backslashes = len(text[i:j]) - len(text[i:j].rstrip("\\"))
        if backslashes % 2 == 0:
            return j
        i = j + 1


def _skip_heredocs(text: str, i: int, pending: list[tuple[str, bool, bool, int]],
                   found: list[HereDoc]) -> int:
    """Skip the bodies of the here-documents opened on the line that just ended (``i`` is the
    offset after its newline), recording each in ``found``."""
    n = len(text)
    for delimiter, strip_tabs, quoted, at in pending:
        start, closed = min(i, n), False
        body_end = n
        while i < n:
            line_start = i
            # one logical line: with an unquoted delimiter, backslash-newline joins the next
            parts: list[str] = []
            while True:
                j = text.find("\n", i)
                end = n if j == -1 else j
                piece = text[i:end]
                i = end + 1
                if quoted or j == -1 or _backslashes_before(text, end) % 2 == 0:
                    parts.append(piece)
                    break
                parts.append(piece[:-1])
            line = "".join(parts)
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                closed, body_end = True, line_start
                break
        # (the line of the operator counted from the last one found: a count from the top per
        # here-document made 20,000 of them on a line quadratic)
        last = found[-1] if found else None
        lineno = last.line + text.count("\n", last.at, at) if last is not None and \
            last.at <= at else text.count("\n", 0, at) + 1
        found.append(HereDoc(lineno, delimiter, start, min(i, n), closed,
                             at, quoted, strip_tabs, body_end if closed else min(i, n)))
    return min(i, n)
