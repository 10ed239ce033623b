"""Statements from the words of a launch script, for the lexer of :mod:`.shellwords`: what each
statement is (a command, assignments, ``if`` / ``case`` / loop openers and closers, ``declare`` &
co.) and in which branch it stands.

A mixin of the lexer, split out of shellwords.py (shfix2, session 39: it was at the 400-line
bound): the lexer builds words from characters, this turns each statement's words into
:class:`.shelltypes.Statement` values; branches are numbered as they open (an ``if``'s arms, a
``case``'s arms, a loop body, the command after ``&&`` / ``||``), with the test that decides each;
an ``if`` / ``case`` / loop left open, or closed by the wrong word, is where bash refuses the
script (``Split.unclosed``).
"""

from __future__ import annotations

from dataclasses import replace

from preflight.reading import shellchain, shelldecl, shellloops
from preflight.reading.shellcase import SKIP_FIRST as _SKIP_FIRST
from preflight.reading.shellheredoc import HereValues
from preflight.reading.shelltypes import Statement, Word
from preflight.reading.shelltypes import assignment as _assignment
from preflight.reading.shelltypes import element as _element
from preflight.reading.shelltypes import literal as _literal

DECLARE = {"declare", "local", "export", "typeset", "readonly"}


class Statements(HereValues):
    """Mixin of the lexer (:mod:`.shellwords`): the statements made from its words."""

    words: list[Word]
    spans: list[tuple[int, int]] | None
    branches: list[int]
    siblings: list[list[int]]
    subjects: list[Word | None]
    in_pattern: bool
    loops: int
    open_at: list[tuple[int, str]]
    chained: bool
    testing: bool
    next_branch: int
    targets: list[tuple[Word, bool | None]]

    def opened(self, condition: list[Word]) -> None:
        """Record the test that decides whether the branch just opened runs."""
        before, self.testing = tuple(self.siblings[-1][:-1]), bool(condition)
        self.out.statements.append(Statement(tuple(condition), self.i, tuple(self.branches[:-1]),
                                             test=(self.branches[-1], before),
                                             subshell=tuple(self.subshell)))

    def skip_first(self, words: list[Word]) -> tuple[list[Word], shelldecl.Decl | None]:
        """The words past `then`, `!` ... and `declare -rx` & co. (shelldecl); [] if none set."""
        decl = None
        first = _literal(words[0])
        while first in _SKIP_FIRST and len(words) > 1:
            self.brace(first, words[0])
            words = words[1:]
            if first in DECLARE:
                options, n = shelldecl.split_options([_literal(w) or "" for w in words[:-1]])
                decl = shelldecl.parse(first, options)
                words = words[n:]
                if not decl.assigns or (first == "local" and not self.in_function(words[0])):
                    return [], decl   # `declare -p`, `export -f f`; `local` outside a function
            first = _literal(words[0])
        return words, decl

    def brace(self, first: str | None, word: Word) -> None:
        """``{`` / ``}`` where a command starts: a group opened or closed, checked as ``fi``
        and ``done`` are (redteam11: ``{ train ...`` never closed is a script bash refuses)."""
        if first == "{":
            self.open_at.append((word[0].offset, "}"))
        elif first == "}":
            self.closed(word[0].offset, "}")

    def in_function(self, word: Word) -> bool:
        self.spans = shelldecl.function_spans(self.text) if self.spans is None else self.spans
        return shelldecl.in_function(self.spans, word[0].offset)

    def unclosed(self) -> None:
        """At the end: an if / case / loop still open (bash: "unexpected end of file")."""
        if self.depth == 0 and self.out.truncated_at is None and self.open_at and \
                self.out.unclosed is None:
            self.out.unclosed = self.open_at[-1][0]

    def closed(self, at: int, word: str) -> None:
        """``fi`` / ``esac`` / ``done`` at ``at``: the innermost open one must be its kind
        (bash: "syntax error near unexpected token"), else the script is refused there."""
        if self.open_at and self.open_at[-1][1] == word:
            self.open_at.pop()
        elif self.out.unclosed is None:
            self.out.unclosed = at

    def new_branch(self) -> int:
        self.next_branch += 1
        return self.next_branch

    def statement(self, words: list[Word]) -> None:
        first = _literal(words[0])
        if self.testing and shellchain.more_test(self, words, first):
            return                       # `if A; B; then`: B decides (shellchain)
        if first in ("elif", "else") and self.branches:
            self.branches[-1] = self.new_branch()
            self.siblings[-1].append(self.branches[-1])
            self.opened(words[1:] if first == "elif" else [])
            if first == "elif" or len(words) == 1:
                return                   # an elif's condition is not part of the job either
            words = words[1:]
            first = _literal(words[0])
        words, decl = self.skip_first(words)
        if not words:
            return
        first = _literal(words[0])
        if first in ("if", "case"):
            self.open_at.append((words[0][0].offset, "fi" if first == "if" else "esac"))
            self.branches.append(self.new_branch())
            self.siblings.append([self.branches[-1]])
            self.subjects.append(None)
            if first == "if":
                self.opened(words[1:])
            return                       # the condition is not part of the job
        if first in ("fi", "esac"):
            self.closed(words[0][0].offset, first)
            del self.branches[-1:], self.siblings[-1:], self.subjects[-1:]
            self.in_pattern = False
            return
        if first == "function" and len(words) > 2 and _literal(words[2]) == "{":
            self.brace("{", words[2])
            if len(words) == 3:
                return
            words, first = words[3:], _literal(words[3])   # `function f { cmd; }` (redteam8)
        if first in shellloops.OPENS:    # the body: a branch its test decides (shellloops)
            self.open_at.append((words[0][0].offset, "done"))
            shellloops.opened(self, words, first)
            return
        if first == "done":
            self.closed(words[0][0].offset, first)
            shellloops.closed(self)
            return
        if first in ("then", "do", "else", "{", "}", "function"):
            self.brace(first, words[0])
            return
        branch = tuple(self.branches)
        if self.chained:         # a branch of its own whose test nobody evaluates
            branch = (*branch, self.new_branch())
        if decl is not None and decl.exported is not None:     # `export A=1 B`, `export -n B`
            self.out.statements.extend(shelldecl.statements(decl, words, branch, self.subshell))
            return
        assigns, n = self.assigns(words, branch, decl)
        words = [] if decl is not None else words[n:]  # `declare -r A=1 B`: B is a name
        # before a command, its environment only (readers still see them as set)
        self.out.statements.extend(replace(a, prefix=bool(words)) for a in assigns)
        if words and self.take(words, branch):   # `read X <<EOF`, `sbatch <<EOF`
            return
        if words:
            self.out.statements.append(Statement(tuple(words), words[0][0].offset, branch,
                                                 subshell=tuple(self.subshell), loop=self.loops > 0,
                                                 writes=tuple(self.targets)))

    def assigns(self, words: list[Word], branch: tuple[int, ...], decl: shelldecl.Decl | None
                ) -> tuple[list[Statement], int]:
        """The leading ``NAME=value`` / ``A[i]=v`` words: their statements, and how many."""
        assigns = []
        n = 0           # an index, not words[1:] per word (redteam7: 100,000 prefixes, 17 s)
        while n < len(words):
            assigned = _assignment(words[n])
            got = _element(words[n]) if assigned is None else None
            if got is not None:     # `A[1]=--fp8-format`: one element of an array (shell17)
                assigns.append(Statement((got[3],) if got[3] else (), words[n][0].offset,
                                         branch, got[0], got[2], True, element=got[1],
                                         subshell=tuple(self.subshell)))
                n += 1
                continue
            if assigned is None:
                break
            name, append, value = assigned
            if decl is not None and not decl.plain:
                value = shelldecl.word(decl, value, words[n][0].offset)
            assigns.append(Statement((value,) if value else (), words[n][0].offset, branch, name,
                                     append, subshell=tuple(self.subshell)))
            n += 1
        return assigns, n
