"""Is a launch script's quoting balanced? A cut-off or mis-quoted script never runs.

The flag readers (:mod:`.megatron`, :mod:`.launch`) look for ``--flag value`` tokens and do not
emulate bash, so a script truncated inside ``GPT_ARGS=( ...`` or with an unterminated ``"`` still
gave flags, and intent said "no FP8" for a job that bash refuses to start ("unexpected EOF while
looking for matching ``"``", "syntax error: unexpected end of file"). :func:`unterminated` finds
the first quote, ``(``, ``$(`` or backquote still open at the end of the file, in one pass.

It is deliberately partial: it knows single and double quotes (``$'...'`` with its escapes),
backslashes, comments, ``$(``/``(``/``)`` nesting (a ``)`` with no ``(``, as in ``case``
patterns, is ignored), backquotes and here-documents (the insides of both are skipped, as
``bash -n`` does). Anything it
does not know can only make it *miss* an error, not invent one on a script bash accepts; the
fixtures and Megatron-LM's own example scripts are the check of that.
"""

from __future__ import annotations

import re

# Ordinary characters and backslash escapes, skipped in C rather than one by one (800 KB of
# `\`-newlines took 0.8 s); newlines too unless a here-document body follows.
_PLAIN = re.compile(r"(?:[^\n'\"\\#$()`<]|\\[\s\S])*")
_PLAIN_NL = re.compile(r"(?:[^'\"\\#$()`<]|\\[\s\S])*")
_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][\w-]*)\2")
_COMMENT_BEFORE = frozenset(" \t\n;&|()")
_WHAT = {"'": "a '...' string", '"': 'a "..." string', "(": "a (", "$(": "a $(",
         "`": "a `...` command"}


def unterminated(text: str) -> tuple[str, int] | None:
    """``(what, line)`` of the first construct still open at the end of ``text``, or None."""
    stack: list[tuple[str, int]] = []          # (what, offset where it opened)
    heredocs: list[tuple[str, bool]] = []
    word_goes_on = -2      # offset of a `)` closing `$(`: a `#` right after it is no comment
    i, n = 0, len(text)
    closes: dict[int, int] = {}     # filled on the first $((: offset of each ( -> its )
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
                i = _skip_heredocs(text, i, heredocs)
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
            if c == '"':
                stack.pop()
            elif c == "$" and text.startswith("(", i + 1):
                stack.append(("$(", i))
                i += 1
            i += 1
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
        if c == "$" and text.startswith("((", i + 1):
            j = _arith_end(text, i + 1, closes)
            if j < 0:
                # Not arithmetic: bash then re-reads it as $( (...) ... ) by rules this checker
                # does not model (bash -n accepts "$(()#)" and "$(()# c'm\n($')", refuses
                # "$(()#()"). It may miss an error, never invent one: stop, report nothing.
                return None
            i = j          # $(( ... )): bash matches the parentheses only, quotes are literal
            word_goes_on = j - 1
            continue
        i, closed = _opener_or_closer(text, i, top, stack, heredocs)
        if closed:
            word_goes_on = closed
    if not stack:
        return None
    what, where = stack[0]
    return _WHAT[what], text.count("\n", 0, where) + 1


def _ansi_c_end(text: str, j: int) -> int:
    """Offset of the ``'`` closing a ``$'...'`` whose body starts at ``j`` (backslash escapes
    inside), or -1."""
    n = len(text)
    while j < n and text[j] != "'":
        j += 2 if text[j] == "\\" else 1
    return j if j < n else -1


def _opener_or_closer(text: str, i: int, top: str, stack: list[tuple[str, int]],
                      heredocs: list[tuple[str, bool]]) -> tuple[int, int]:
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
    elif c == "<" and text.startswith("<<", i) and not text.startswith("<<<", i):
        m = _HEREDOC.match(text, i)
        if m:
            heredocs.append((m.group(3), m.group(1) == "-"))
            return m.end(), 0
    return i + 1, 0


_PAREN = re.compile(r"\\[\s\S]|[()]")


def _arith_end(text: str, i: int, closes: dict[int, int]) -> int:
    """Offset just after the ``))`` closing a ``$((`` whose first ``(`` is at ``i``, or -1.

    Every ``(`` is matched in one pass over the text, the first time one is needed (a scan per
    ``$((`` made ``$((`` repeated 30,000 times take minutes)."""
    if not closes:
        closes[-1] = -1
        opened: list[int] = []
        for m in _PAREN.finditer(text):
            if m.group(0) == "(":
                opened.append(m.start())
            elif m.group(0) == ")" and opened:
                closes[opened.pop()] = m.start()
    outer = closes.get(i, -1)
    return outer + 1 if outer > 0 and closes.get(i + 1) == outer - 1 else -1


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


def _skip_heredocs(text: str, i: int, pending: list[tuple[str, bool]]) -> int:
    """Skip the bodies of the here-documents opened on the line that just ended."""
    for delimiter, strip_tabs in pending:
        while i < len(text):
            j = text.find("\n", i)
            end = len(text) if j == -1 else j
            body = text[i:end]
            i = end + 1
            if (body.lstrip("\t") if strip_tabs else body) == delimiter:
                break
    return min(i, len(text))
