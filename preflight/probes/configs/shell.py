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

_PLAIN = re.compile(r"[^\n'\"\\#$()`<]*")
_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][\w-]*)\2")
_COMMENT_BEFORE = frozenset(" \t\n;&|()")
_WHAT = {"'": "a '...' string", '"': 'a "..." string', "(": "a (", "`": "a `...` command"}


def unterminated(text: str) -> tuple[str, int] | None:
    """``(what, line)`` of the first construct still open at the end of ``text``, or None."""
    stack: list[tuple[str, int]] = []
    heredocs: list[tuple[str, bool]] = []
    i, n, line = 0, len(text), 1
    while i < n:
        m = _PLAIN.match(text, i)          # ordinary characters: skipped in C, not one by one
        if m.end() > i:
            i = m.end()
            continue
        c = text[i]
        top = stack[-1][0] if stack else ""
        if c == "\n":
            line += 1
            i += 1
            if heredocs and top not in ("'", '"'):
                i, line = _skip_heredocs(text, i, line, heredocs)
                heredocs.clear()
            continue
        if top == "'":
            j = text.find("'", i)
            if j == -1:
                break
            line += text.count("\n", i, j)
            stack.pop()
            i = j + 1
            continue
        if c == "\\":
            if text.startswith("\n", i + 1):
                line += 1
            i += 2
            continue
        if c == "`":
            # bash finds the closing backquote textually and parses what is inside only when it
            # runs it (bash -n accepts "`'`"), so the inside is skipped, not checked
            j = _backquote_end(text, i + 1)
            if j < 0:
                stack.append(("`", line))
                break
            line += text.count("\n", i, j)
            i = j + 1
            continue
        if top == '"':
            if c == '"':
                stack.pop()
            elif c == "$" and text.startswith("(", i + 1):
                stack.append(("(", line))
                i += 1
            i += 1
            continue
        # unquoted, or inside $( ... ) / ( ... ) / ` ... `
        if c == "#" and (i == 0 or text[i - 1] in _COMMENT_BEFORE):
            j = text.find("\n", i)
            i = n if j == -1 else j
            continue
        if c == "$" and text.startswith("'", i + 1):          # $'...': backslash escapes
            j = i + 2
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                stack.append(("'", line))
                break
            line += text.count("\n", i, j)
            i = j + 1
            continue
        if c in "'\"":
            stack.append((c, line))
        elif c == "(":
            stack.append(("(", line))
        elif c == ")":
            if top == "(":
                stack.pop()
        elif c == "<" and text.startswith("<<", i) and not text.startswith("<<<", i):
            m = _HEREDOC.match(text, i)
            if m:
                heredocs.append((m.group(3), m.group(1) == "-"))
                i = m.end()
                continue
        i += 1
    if not stack:
        return None
    what, where = stack[0]
    return _WHAT[what], where


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


def _skip_heredocs(text: str, i: int, line: int, pending: list[tuple[str, bool]],
                   ) -> tuple[int, int]:
    """Skip the bodies of the here-documents opened on the line that just ended."""
    for delimiter, strip_tabs in pending:
        while i < len(text):
            j = text.find("\n", i)
            end = len(text) if j == -1 else j
            body = text[i:end]
            i = end + 1
            line += 1
            if (body.lstrip("\t") if strip_tabs else body) == delimiter:
                break
    return min(i, len(text)), line
