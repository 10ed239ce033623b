"""``while`` / ``until`` / ``for NAME in LIST`` for the lexer of :mod:`.shellwords`: whether a
loop's body runs at all is a test, like an ``if``'s (:mod:`.shellbranch`), so the body stands
in a branch of its own that :class:`.shellexpand.Eval` decides (:func:`runs`).

redteam10 (session 37): a loop body was read as running once whatever its test said, so
``until true; do EXTRA=--fp8-format hybrid; done`` gave FP8 "yes" where bash never sets it.
Now ``while T`` runs its body when ``T`` holds, ``until T`` when it does not (bash(1), "Compound
Commands": the body runs as long as the test's status is zero / non-zero), a test decided
nowhere leaves the body undecided (Unknown, as an undecided ``if``); ``for NAME in WORDS``
runs its body when ``WORDS`` expand to at least one word (none: never; a run-time value that
may expand to none: undecided). ``for ((INIT; COND; STEP))`` runs its body when ``COND`` holds
after ``INIT`` (:mod:`.shellarith`; redteam11: ``for ((i = 0; i < 0; i++))`` was read as running).
``for NAME; do`` ("$@") is read as running, as before; a body that runs still runs 0..n times
(``Statement.loop``).
"""

from __future__ import annotations

from typing import Any

from preflight.reading.shellarith import is_arith
from preflight.reading.shellchain import loop_variable
from preflight.reading.shelltypes import Field, Statement, Word, literal

OPENS = ("while", "until", "for", "select")


def opened(lexer: Any, words: list[Word], first: str) -> None:
    """A loop's first statement (``while TEST``, ``for NAME in LIST``): its branch opens
    (``for`` without ``in`` and ``select`` open none)."""
    lexer.loops += 1
    kind = first if first in ("while", "until") else "for" if (
        first == "for" and len(words) > 2 and literal(words[2]) == "in") else "arith" if (
        first == "for" and len(words) > 1 and is_arith("".join(p.text for p in words[1]))
    ) else None
    lexer.loop_stack.append(kind is not None)
    if kind is not None:
        lexer.branches.append(lexer.new_branch())
        lexer.siblings.append([lexer.branches[-1]])
        lexer.subjects.append(None)
        test = words[3:] if kind == "for" else words[1:2] if kind == "arith" else words[1:]
        lexer.out.statements.append(Statement(tuple(test), lexer.i, tuple(lexer.branches[:-1]),
                                              test=(lexer.branches[-1], ()), loop_test=kind,
                                              subshell=tuple(lexer.subshell)))
        lexer.testing = kind not in ("for", "arith") and bool(test)  # `while A; B; do`: B
    if first == "for" and kind != "arith":   # its variable: a run-time value, set only
                                               # when the body runs
        lexer.out.statements.extend(loop_variable(words, tuple(lexer.branches)))


def closed(lexer: Any) -> None:
    """``done``: the innermost loop ends (its branch closes, if it opened one)."""
    lexer.loops = max(0, lexer.loops - 1)
    if lexer.loop_stack and lexer.loop_stack.pop():
        del lexer.branches[-1:], lexer.siblings[-1:], lexer.subjects[-1:]


def runs(kind: str, got: bool | None, fields: list[Field]) -> bool | None:
    """Whether a loop's body runs at least once: ``got`` is its test (while/until), ``fields``
    the expanded list (for); None where that is decided only when the script runs."""
    if kind == "until":
        return None if got is None else not got
    if kind == "for":
        if any(not s.loose for f in fields for s in f):
            return True          # a word that is there whatever the run (quoted, or literal)
        return False if not fields else None
    return got
