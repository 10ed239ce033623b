"""``case WORD in a|b) ...;; esac`` for the lexer of :mod:`.shellwords`: each arm a branch of
its own, opened by a test (its patterns matched against the subject, :mod:`.shellexpand`).

Split out of shellwords.py (redfix, session 37: it was at the 400-line bound); the functions
take the lexer, as :mod:`.shellchain` does.
"""

from __future__ import annotations

from typing import Any

from preflight.reading.shelltypes import Part, Statement, Word, literal

SKIP_FIRST = {"then", "do", "else", "{", "}", "!", "time", "export", "local", "readonly",
              "declare", "typeset"}
"""Words a statement may start with before the command (keywords, declarations)."""


def opened(lexer: Any) -> None:
    """``case WORD in``: a branch per arm opens; the words up to ``)`` are patterns."""
    words: list[Word] = lexer.words
    k = 0
    while k < len(words) - 1 and literal(words[k]) in SKIP_FIRST:
        k += 1
    if lexer.in_pattern or len(words) - k != 3 or literal(words[k]) != "case" or \
            literal(words[k + 2]) != "in":
        return
    lexer.words = []
    for word in words[:k]:
        # `do case $o in` / `then case ...` on one line: the keyword ends the loop's or if's
        # test as on a line of its own (shell16: a one-line `while getopts ...; do case ...;
        # esac; done` took the arms for more of the test, and `esac` closed nothing)
        if literal(word) in ("then", "do", "else", "{"):
            lexer.statement([word])
    lexer.open_at.append((words[k][0].offset, "esac"))
    lexer.branches.append(lexer.new_branch())
    lexer.siblings.append([lexer.branches[-1]])
    lexer.subjects.append(words[k + 1])
    lexer.in_pattern, lexer.fallthrough = True, False


def arm(lexer: Any) -> None:
    """The ``)`` ending an arm's patterns: the test that decides whether the arm runs."""
    lexer.end_word()
    patterns, lexer.words = lexer.words, []
    lexer.in_pattern = False
    if not lexer.branches or not lexer.subjects or lexer.subjects[-1] is None:
        return
    subject = lexer.subjects[-1]
    if lexer.fallthrough:        # `;&` runs this arm after the one before without a test
        subject = (Part("[...]", lexer.i, var=True,
                        opaque="a case arm after ;& or ;;& may run without matching"),)
    before = tuple(lexer.siblings[-1][:-1]) if not lexer.fallthrough else ()
    lexer.out.statements.append(Statement((subject,), lexer.i, tuple(lexer.branches[:-1]),
                                          test=(lexer.branches[-1], before),
                                          patterns=tuple(patterns),
                                          subshell=tuple(lexer.subshell)))
