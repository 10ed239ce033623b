"""Split a launch script into statements of words, as bash would, without running anything.

Override launch lines (``python3 -m verl.trainer.main_ppo "${ACTOR[@]}" ...``, ``CMD="$CMD
$CLI_OVERRIDES"; bash -c "$CMD"``) keep their settings in bash arrays and strings, so finding
``--flag`` tokens in the text is not enough: the words must be split, quotes removed and
variables expanded where the launch command uses them (:mod:`.shellexpand`). This module only
splits: each :class:`Statement` is a command or an assignment (``NAME=value``, ``NAME+=value``,
``NAME=( ... )``) whose words are :class:`Part` sequences (literal text with its offset in the
script, or a ``$NAME`` / ``${NAME:-default}`` / ``"${NAME[@]}"`` reference), and says in which
``if`` / ``case`` branch it stands (a value set in a branch the launch is not in may not apply).

It is deliberately partial: single, double and ``$'...'`` quotes, backslashes and ``\\``-newline
continuations, comments, ``;`` ``&&`` ``||`` ``|`` ``&`` and newlines between statements,
array assignments over several lines, here-document bodies skipped. ``$( ... )``, backquotes and
``$(( ... ))`` are kept as references nobody can resolve (their value is decided at run time).
Bounded: :data:`MAX_PARTS` parts in all; past it the rest is not split (``Split.truncated_at``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from preflight.base.digits import ascii_digits
from preflight.reading import shellcase, shellchain, shelldecl
from preflight.reading.shell import HereDoc, heredocs, operator_end
from preflight.reading.shellheredoc import MAX_TAKEN, Taken, taken
from preflight.reading.shellstmt import DECLARE, Statements
from preflight.reading.shelltypes import ASSIGN as _ASSIGN
from preflight.reading.shelltypes import MAX_PARTS, Part, Split, Statement, Word
from preflight.reading.shelltypes import literal as _literal

__all__ = ["MAX_PARTS", "Part", "Split", "Statement", "Word", "split"]

_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][\w-]*)\1")
_SEPARATORS = {";", "&", "|", "\n", "(", ")"}
_PLAIN = re.compile(r"[^\s\\'\"$`<>;&|()#]+")
_REDIRECT = re.compile(r"[<>&|]+(-?\d*)?")
_TO_FD = re.compile(r"&\d+-?$|&-$")
_TO_FILE = {">", ">>", ">|", "&>", "&>>"}
_BEFORE_ARITH = {"for", "if", "elif", "while", "until", "!", "then", "do", "else", "{", "time"}
MAX_NESTING = 256
"""Subshells open at once (a real script: a few); past it the rest is not split, as past
``MAX_PARTS`` (each statement keeps its subshells: 20,000 ``(`` took seconds)."""
MAX_ARITH = 4096
"""Characters of one ``((...))`` looked through for its end (past it: read as before)."""

_OPENERS = ("then", "do", "else", "{")
"""Keywords an array assignment may follow on its line (`then A+=(x)`)."""


class _Lexer(Statements):
    def __init__(self, text: str, depth: int = 0) -> None:
        self.depth = depth
        self.text = text
        self.n = len(text)
        self.i = 0
        self.parts = 0
        self.out = Split(text=text)
        self.words: list[Word] = []
        self.cur: list[Part] = []
        self.lit: list[str] = []
        self.lit_at = 0
        self.lit_quoted = False
        self.array_name: tuple[str, bool, int] | None = None   # inside NAME=( ... )
        self.array_branch: tuple[int, ...] = ()     # the branch that array assignment is in
        self.array_words: list[Word] = []
        self.spans: list[tuple[int, int]] | None = None     # function bodies (`local` works there)
        self.heredocs: list[str | HereDoc] = []
        # every here-document as bash reads it (reading/shell.py), by the offset of its `<<`
        self.docs = {d.at: d for d in heredocs(text)} if depth == 0 and "<<" in text else {}
        self.takeable = set(list(self.docs)[:MAX_TAKEN])
        self.reading: Taken | None = None    # `read ... <<EOF` in the statement being split
        self.drop_next = False       # the word after a redirection (its target) is no argument
        self.capture: bool | None = None    # that target is stdout's (>> : True), kept
        self.other_fd = False        # ... or another descriptor's (`2> f`): kept, content unknown
        self.after_paren = False     # the statement before ended with `)` (`( ... ) > f`)
        self.targets: list[tuple[Word, bool | None]] = []     # the statement's (shellfiles)
        self.branches: list[int] = []
        self.siblings: list[list[int]] = []   # per open if/case: its branches so far
        self.subjects: list[Word | None] = []  # per open if/case: a case's subject (if: None)
        self.in_pattern = False      # between `case X in` / `;;` and the arm's `)`
        self.fallthrough = False     # the arm before ended in `;&` / `;;&`
        self.subshell: list[int] = []   # the open `( ... )` subshells, outermost first
        self.loops = 0                  # the open while/until/for bodies (redteam8: `shift`)
        self.loop_stack: list[bool] = []   # per open loop: whether it opened a branch
        self.open_at: list[tuple[int, str]] = []   # each open if / case / loop: where, its
                                        # closing word (Split.unclosed)
        self.chained = False         # the statement before ended in && or ||
        self.pending: tuple[int, str] | None = None   # a test joined by && / || (shellchain)
        self.testing = False         # an if/elif test not yet ended by `then` (shellchain)
        self.next_branch = 0
        self.no_arith = -1               # `((` before this offset: no arithmetic (looked at)

    # -- building words ---------------------------------------------------------------------
    def add_lit(self, ch: str, at: int, quoted: bool) -> None:
        """Literal text (one character or a run) written at ``at``."""
        if self.lit and self.lit_quoted != quoted:
            self.flush_lit()
        if not self.lit:
            self.lit_at, self.lit_quoted = at, quoted
        self.lit.append(ch)

    def flush_lit(self) -> None:
        if self.lit:
            self.add_part(Part("".join(self.lit), self.lit_at, quoted=self.lit_quoted))
            self.lit = []

    def add_part(self, part: Part) -> None:
        if part is not None:
            self.parts += 1
            self.cur.append(part)

    def end_word(self) -> None:
        self.flush_lit()
        if self.cur:
            word = tuple(self.cur)
            self.cur = []
            if self.drop_next:
                self.drop_next = False
                if self.capture is not None and len(self.targets) < 8:
                    self.targets.append((word, None if self.other_fd else self.capture))
                self.capture, self.other_fd = None, False
                return
            if self.array_name is not None:
                self.array_words.append(word)
            else:
                self.words.append(word)
                shellcase.opened(self)

    def end_statement(self, sep: str = "") -> None:
        self.end_word()
        self.drop_next, self.capture, self.other_fd = False, None, False
        if self.array_name is not None:
            return                       # newlines inside NAME=( ... ) separate items only
        words, self.words = self.words, []
        if not words and self.targets and not self.after_paren:
            # `> f`, `2> f`: bash's null command with that redirection, which truncates f
            # (bash(1), "Simple Command Expansion"; redteam18: dropped, a written script
            # emptied so was still followed)
            words = [(Part(":", self.targets[0][0][0].offset),)]
        self.after_paren = False
        if words and not shellchain.merged(self, words, sep):   # `[ a ] && [ b ]`: one test
            before = len(self.out.statements)
            self.statement(words)
            last = self.out.statements[-1] if len(self.out.statements) > before else None
            if last is not None and sep == "&" and last.writes:    # `echo x > f &` (shellfiles)
                self.out.statements[-1] = last = replace(last, background=True)
            if last is not None and last.test is not None and sep in ("||", "&&", "|"):
                shellchain.opened(self, sep)    # `if [ a ] || [ b ]`: more of the test follows
        self.reading, self.targets = None, []
        # `test && A=1 || A=2`: what follows && / || runs or not at run time
        if words or sep:         # `A &&` then a newline: B is still chained (bash reads on)
            self.chained = sep in ("&&", "||") and bool(words)
        if sep in (";;", ";&", ";;&") and self.branches:   # next case pattern: a new branch
            self.branches[-1] = self.new_branch()
            self.siblings[-1].append(self.branches[-1])
            if self.subjects and self.subjects[-1] is not None:
                self.in_pattern, self.fallthrough = True, sep != ";;"

    # -- the scan ---------------------------------------------------------------------------
    def run(self) -> Split:
        text, n = self.text, self.n
        while self.i < n:
            if self.parts > MAX_PARTS or len(self.subshell) > MAX_NESTING:
                self.out.truncated_at = self.i
                break
            c = text[self.i]
            if self.in_pattern and c in "|()" and not text.startswith("||", self.i):
                if c == ")":
                    shellcase.arm(self)
                elif c == "|":
                    self.end_word()      # `a|b)`: one more pattern
                self.i += 1              # `(a|b)`: the optional `(` before the patterns
                continue
            if c in " \t\r":
                self.end_word()
                self.i += 1
            elif c == "\\":
                if self.i + 1 < n and text[self.i + 1] == "\n":
                    self.end_word()      # a continuation also ends the word before it
                    self.i += 2
                else:
                    if self.i + 1 < n:
                        self.add_lit(text[self.i + 1], self.i + 1, False)
                    self.i += 2
            elif c == "#" and not self.cur and not self.lit:
                j = text.find("\n", self.i)
                self.i = n if j == -1 else j
            elif c == "'":
                self.single()
            elif c == '"':
                self.double()
            elif c == "$":
                self.dollar(quoted=False)
            elif c == "`":
                self.backquote()
            elif c in "\n()":
                self.newline_or_paren(c)
            elif c in "<>" or (c == "&" and text.startswith(">", self.i + 1)):
                self.redirection()
            elif c in _SEPARATORS:
                two = text[self.i:self.i + 2]
                sep = ";;&" if text.startswith(";;&", self.i) else \
                    two if two in (";;", "&&", "||", ";&") else c
                self.end_statement(sep)
                self.i += len(sep)
            else:
                m = _PLAIN.match(text, self.i)       # a run of ordinary characters at once
                end = m.end() if m and m.end() > self.i else self.i + 1
                self.add_lit(text[self.i:end], self.i, False)
                self.i = end
        self.end_statement()
        self.unclosed()
        if self.depth == 0 and ("(" in text or "function" in text):
            self.out.functions = shelldecl.function_spans(text)   # their own "$@" (shellargs)
            self.out.names = shelldecl.function_names(text)
        if self.array_name is not None:          # an unterminated array: keep what it held
            name, append, at = self.array_name
            self.out.statements.append(Statement(tuple(self.array_words), at,
                                                 self.array_branch, name, append, True))
        return self.out

    def newline_or_paren(self, c: str) -> None:
        """A newline ends a statement (here-document bodies after it are skipped); ``(``
        opens ``NAME=( ... )`` or a subshell, ``)`` closes the array or ends a statement."""
        if c == "(" and self.arithmetic():
            return
        if c == "\n":
            self.end_statement()
            self.i += 1
            if self.heredocs:
                self.skip_heredocs()
        elif c == "(" and self.array_name is None and self.starts_array():
            self.i += 1
        elif c == ")" and self.array_name is not None:
            self.end_word()
            name, append, at = self.array_name
            self.array_name = None
            self.out.statements.append(Statement(tuple(self.array_words), at,
                                                 self.array_branch, name, append, True,
                                                 subshell=tuple(self.subshell)))
            self.array_words = []
            self.i += 1
        else:
            self.end_statement(c)
            self.after_paren = c == ")"
            # `( cd x; ... )`: what runs inside stays inside (a function's `f()` opens none)
            if c == "(":
                self.subshell.append(self.new_branch())
            elif self.subshell:
                self.subshell.pop()
            self.i += 1

    def redirection(self) -> None:
        """``> log``, ``2>&1``, ``&> out``: the operator and its target are no arguments;
        ``<<EOF``: a here-document, whose body (after this line) is skipped (``read ...
        <<EOF``: the body is the value read, :meth:`read_into`)."""
        doc = self.docs.get(self.i)
        end = operator_end(self.text, self.i) if doc is not None else None
        if doc is not None and end is not None:
            self.heredocs.append(doc)
            self.end_word()
            got = taken(self.text, doc) if self.i in self.takeable else None
            if got is not None and got.how in ("read", "run", "file"):
                self.reading = got
            self.i = end
            return
        heredoc = _HEREDOC.match(self.text, self.i) if not self.text.startswith(
            "<<<", self.i) else None
        if heredoc is not None:
            self.heredocs.append(heredoc.group(2))
            self.end_word()
            self.i = heredoc.end()
            return
        fd = "".join(self.lit) if self.lit and not self.cur else ""
        if fd and ascii_digits(fd):
            self.lit = []                # the file descriptor in front of it
        self.end_word()
        m = _REDIRECT.match(self.text, self.i)
        self.i = m.end() if m else self.i + 1
        if not (m and _TO_FD.search(m.group(0))):
            self.drop_next = True        # `> file`: the next word is the target
            op = m.group(0) if m else ""
            if op in _TO_FILE and fd in ("", "1"):
                self.capture = op.endswith(">>")
            elif ">" in op:              # `2> f`, `3>> f`, `>& f`, `<> f`: f holds what
                self.capture, self.other_fd = False, True   # is not known here (redteam18)

    def arithmetic(self) -> bool:
        """``((...))`` where a command or ``for``'s list starts: one word, its text as written
        (:mod:`.shellarith` decides it), not two subshells around an assignment and a
        redirection (redteam11: ``for ((i = 0; i < 0; i++))``); with a ``;`` or a newline
        outside ``for`` it is bash's nested subshells after all."""
        text, i = self.text, self.i
        if not text.startswith("((", i) or self.cur or self.lit or self.array_name is not None \
                or i < self.no_arith or any(_literal(w) not in _BEFORE_ARITH for w in self.words):
            return False
        depth, j = 0, i + 2
        while j < self.n and j - i <= MAX_ARITH:
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                if depth == 0:
                    break
                depth -= 1
            j += 1
        body = text[i + 2:j]
        is_for = [_literal(w) for w in self.words] == ["for"]
        if not text.startswith("))", j) or "\n" in body or ("#" in body) or (
                ";" in body and not is_for):
            self.no_arith = j      # what was looked through holds none (`((((...`: linear)
            return False
        self.add_part(Part(text[i:j + 2], i, quoted=True))
        self.end_word()
        self.i = j + 2
        return True

    def nested(self) -> _Lexer:
        return _Lexer(self.text, self.depth + 1)

    def starts_array(self) -> bool:
        """``NAME=(`` / ``NAME+=(``: the word so far is the assignment's left side (after
        ``declare -a`` / ``local`` and their options, if any)."""
        k = 0
        while k < len(self.words) and _literal(self.words[k]) in _OPENERS:
            k += 1
        if self.cur or not self.lit or any(
                (_literal(w) or "-").lstrip("-") not in DECLARE for w in self.words[k:]
                if not (_literal(w) or "").startswith("-")):
            return False
        m = _ASSIGN.fullmatch("".join(self.lit))
        if not m:
            return False
        # `then A+=(x)`, `do A+=(x)`, `else A=(x)` on one line: the keyword opens its branch
        # first, as on a line of its own (shell17: the array was taken as set before the `if`,
        # its words a command, so `if [[ $X ]]; then ARGS+=(--fp8-format hybrid); fi` reached
        # the launch as nothing: a confident "no FP8")
        openers, self.words = self.words[:k], self.words[k:]
        for word in openers:
            self.statement([word])
        self.array_branch = tuple(self.branches)
        if self.chained:     # `[[ $X ]] && A+=(x)`: a branch of its own, as a command's
            self.array_branch = (*self.array_branch, self.new_branch())
            self.chained = False
        self.array_name = (m.group(1), bool(m.group(2)), self.lit_at)
        self.lit = []
        return True

@lru_cache(maxsize=8)
def split(text: str) -> Split:
    """The statements of a shell script (see the module docstring). Kept for the last few
    texts: one launch script is split by the walk of the scripts it calls, by each reader that
    finds its launch line and by the env-prefix reader (7 times a check before); nothing
    changes a :class:`Split` once made (its statements are frozen)."""
    return _Lexer(text).run()


def plain(text: str) -> str:
    """The script's commands one a line, each word with its quotes removed (``uv run rl "@"
    x.toml`` is ``uv run rl @ x.toml``; a variable stays ``$NAME``), for the pattern a framework
    recognises its launch line by (redteam11: a quoted ``"@"`` hid prime-rl's launch).
    Assignments, tests and what only prints its words (``echo "rl @ x.toml"``) are left out;
    bounded by :func:`split`."""
    lines = (" ".join("".join(("$" + p.text) if p.var and not p.text.startswith("$") else p.text
                              for p in w) for w in st.words)
             for st in split(text).statements if st.assign is None and st.test is None)
    return "\n".join(line for line in lines if line.split(" ", 1)[0] not in _PRINTS)


_PRINTS = {"echo", "printf", "cat", "grep", "sed", "awk", "tee", ":", "#"}
