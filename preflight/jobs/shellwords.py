"""Split a launch script into statements of words, as bash would, without running anything.

Override launch lines (``python3 -m verl.trainer.main_ppo "${ACTOR[@]}" ...``, ``CMD="$CMD
$CLI_OVERRIDES"; bash -c "$CMD"``) keep their settings in bash arrays and strings, so finding
``--flag`` tokens in the text is not enough: the words must be split, quotes removed and
variables expanded where the launch command uses them (:mod:`.shellexpand`). This module only
splits: each :class:`Statement` is a command or an assignment (``NAME=value``, ``NAME+=value``,
``NAME=( ... )``) whose words are :class:`Part` sequences (literal text with its offset in the
script, or a ``$NAME`` / ``${NAME:-default}`` / ``"${NAME[@]}"`` reference), and says in which
``if`` / ``case`` branch it stands (a value set in a branch the launch line is not in may not
apply).

It is deliberately partial: single, double and ``$'...'`` quotes, backslashes and ``\\``-newline
continuations, comments, ``;`` ``&&`` ``||`` ``|`` ``&`` and newlines between statements,
array assignments over several lines, here-document bodies skipped. ``$( ... )``, backquotes and
``$(( ... ))`` are kept as references nobody can resolve (their value is decided at run time).
Bounded: at most :data:`MAX_PARTS` parts in all; past it the rest of the script is not split
(:attr:`Split.truncated_at` says where).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

MAX_PARTS = 200_000
"""Parts (literal pieces and references) split from one script: a real launch script has a few
thousand; each one costs time to expand and read."""


@dataclass(frozen=True)
class Part:
    """A piece of a word: literal text, or a reference to a variable."""

    text: str                      # the literal text, or the variable's name
    offset: int                    # where it starts in the script
    var: bool = False              # ``$NAME`` / ``${NAME...}``
    default: str | None = None     # ``${NAME:-default}`` / ``${NAME-default}``
    default_parts: tuple[Part, ...] = ()   # the default's own parts (``${A:-${B}/x}``)
    array: bool = False            # ``${NAME[@]}`` / ``${NAME[*]}``: every element
    quoted: bool = False           # inside "...": no word splitting when expanded
    opaque: str | None = None      # a value decided at run time (``$(...)``, ``$1``): why


Word = tuple[Part, ...]


@dataclass(frozen=True)
class Statement:
    """One simple command, or one assignment (its value words in ``words``)."""

    words: tuple[Word, ...]
    offset: int
    branch: tuple[int, ...]        # the ``if``/``case`` branches it stands in, outermost first
    assign: str | None = None      # the variable assigned
    append: bool = False           # ``+=``
    array: bool = False            # ``NAME=( ... )``
    test: tuple[int, tuple[int, ...]] | None = None
    """An ``if`` / ``elif`` / ``else`` opening branch ``test[0]``: its condition words are
    ``words`` (none for ``else``); ``test[1]`` are the branches of the same ``if`` before it
    (a branch runs only if none of them did)."""


@dataclass
class Split:
    statements: list[Statement] = field(default_factory=list)
    truncated_at: int | None = None     # offset where splitting stopped (budget spent)


_NAME = re.compile(r"[A-Za-z_]\w*")
_ASSIGN = re.compile(r"([A-Za-z_]\w*)(\+?)=")
_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][\w-]*)\1")
_SEPARATORS = {";", "&", "|", "\n", "(", ")"}
_PLAIN = re.compile(r"[^\s\\'\"$`<>;&|()#]+")
_PLAIN_DQ = re.compile(r'[^"\\$`]+')
_REDIRECT = re.compile(r"[<>&|]+(-?\d*)?")
_TO_FD = re.compile(r"&\d+-?$|&-$")
_DECLARE = {"declare", "local", "export", "typeset", "readonly"}
_SKIP_FIRST = {"then", "do", "else", "{", "}", "!", "time", "export", "local", "readonly",
               "declare", "typeset"}


class _Lexer:
    def __init__(self, text: str, depth: int = 0) -> None:
        self.depth = depth
        self.text = text
        self.n = len(text)
        self.i = 0
        self.parts = 0
        self.out = Split()
        self.words: list[Word] = []
        self.cur: list[Part] = []
        self.lit: list[str] = []
        self.lit_at = 0
        self.lit_quoted = False
        self.stmt_at = 0
        self.array_name: tuple[str, bool, int] | None = None   # inside NAME=( ... )
        self.array_words: list[Word] = []
        self.heredocs: list[str] = []
        self.drop_next = False       # the word after a redirection (its target) is no argument
        self.branches: list[int] = []
        self.siblings: list[list[int]] = []   # per open if/case: its branches so far
        self.chained = False         # the statement before ended in && or ||
        self.next_branch = 0

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
                return
            if self.array_name is not None:
                self.array_words.append(word)
            else:
                if not self.words:
                    self.stmt_at = word[0].offset
                self.words.append(word)

    def end_statement(self, sep: str = "") -> None:
        self.end_word()
        self.drop_next = False
        if self.array_name is not None:
            return                       # newlines inside NAME=( ... ) separate items only
        words, self.words = self.words, []
        if words:
            before = len(self.out.statements)
            self.statement(words)
            last = self.out.statements[-1] if len(self.out.statements) > before else None
            if last is not None and last.test is not None and sep in ("||", "&&", "|"):
                # `if [ a ] || [ b ]`: only part of the test was split off; leave it undecided
                self.out.statements[-1] = replace(last, words=((Part(
                    "[...]", last.offset, var=True, opaque="a compound test"),),))
        # `test && A=1 || A=2`: what follows && / || runs or not at run time
        self.chained = sep in ("&&", "||") and bool(words)
        if sep == ";;" and self.branches:           # next case pattern: a new branch
            self.branches[-1] = self.new_branch()
            self.siblings[-1].append(self.branches[-1])

    def opened(self, condition: list[Word]) -> None:
        """Record the test that decides whether the branch just opened runs."""
        before = tuple(self.siblings[-1][:-1])
        self.out.statements.append(Statement(tuple(condition), self.i, tuple(self.branches[:-1]),
                                             test=(self.branches[-1], before)))

    def new_branch(self) -> int:
        self.next_branch += 1
        return self.next_branch

    def statement(self, words: list[Word]) -> None:
        first = _literal(words[0])
        if first in ("elif", "else") and self.branches:
            self.branches[-1] = self.new_branch()
            self.siblings[-1].append(self.branches[-1])
            self.opened(words[1:] if first == "elif" else [])
            if first == "elif" or len(words) == 1:
                return                   # an elif's condition is not part of the job either
            words = words[1:]
            first = _literal(words[0])
        while first in _SKIP_FIRST and len(words) > 1:
            words = words[1:]
            first = _literal(words[0])
        if first in ("if", "case"):
            self.branches.append(self.new_branch())
            self.siblings.append([self.branches[-1]])
            if first == "if":
                self.opened(words[1:])
            return                       # the condition is not part of the job
        if first in ("fi", "esac"):
            if self.branches:
                self.branches.pop()
                self.siblings.pop()
            return
        if first in ("while", "until", "for", "done", "then", "do", "else", "{", "}", "function"):
            return
        branch = tuple(self.branches)
        if self.chained:         # a branch of its own whose test nobody evaluates
            branch = (*branch, self.new_branch())
        # leading NAME=value words: assignments (before a command, they are its environment)
        while words:
            assigned = _assignment(words[0])
            if assigned is None:
                break
            name, append, value = assigned
            self.out.statements.append(Statement((value,) if value else (), words[0][0].offset,
                                                 branch, name, append))
            words = words[1:]
        if words:
            self.out.statements.append(Statement(tuple(words), words[0][0].offset, branch))

    # -- the scan ---------------------------------------------------------------------------
    def run(self) -> Split:
        text, n = self.text, self.n
        while self.i < n:
            if self.parts > MAX_PARTS:
                self.out.truncated_at = self.i
                break
            c = text[self.i]
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
                sep = two if two in (";;", "&&", "||") else c
                self.end_statement(sep)
                self.i += len(sep)
            else:
                m = _PLAIN.match(text, self.i)       # a run of ordinary characters at once
                end = m.end() if m and m.end() > self.i else self.i + 1
                self.add_lit(text[self.i:end], self.i, False)
                self.i = end
        self.end_statement()
        if self.array_name is not None:          # an unterminated array: keep what it held
            name, append, at = self.array_name
            self.out.statements.append(Statement(tuple(self.array_words), at,
                                                 tuple(self.branches), name, append, True))
        return self.out

    def newline_or_paren(self, c: str) -> None:
        """A newline ends a statement (here-document bodies after it are skipped); ``(``
        opens ``NAME=( ... )`` or a subshell, ``)`` closes the array or ends a statement."""
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
                                                 tuple(self.branches), name, append, True))
            self.array_words = []
            self.i += 1
        else:
            self.end_statement(c)
            self.i += 1

    def redirection(self) -> None:
        """``> log``, ``2>&1``, ``&> out``: the operator and its target are no arguments;
        ``<<EOF``: a here-document, whose body (after this line) is skipped."""
        heredoc = _HEREDOC.match(self.text, self.i) if not self.text.startswith(
            "<<<", self.i) else None
        if heredoc is not None:
            self.heredocs.append(heredoc.group(2))
            self.end_word()
            self.i = heredoc.end()
            return
        if self.lit and not self.cur and "".join(self.lit).isdigit():
            self.lit = []                # the file descriptor in front of it
        self.end_word()
        m = _REDIRECT.match(self.text, self.i)
        self.i = m.end() if m else self.i + 1
        if not (m and _TO_FD.search(m.group(0))):
            self.drop_next = True        # `> file`: the next word is the target

    def starts_array(self) -> bool:
        """``NAME=(`` / ``NAME+=(``: the word so far is the assignment's left side (after
        ``declare -a`` / ``local`` and their options, if any)."""
        if self.cur or not self.lit or any(
                (_literal(w) or "-").lstrip("-") not in _DECLARE for w in self.words
                if not (_literal(w) or "").startswith("-")):
            return False
        m = _ASSIGN.fullmatch("".join(self.lit))
        if not m:
            return False
        self.array_name = (m.group(1), bool(m.group(2)), self.lit_at)
        self.lit = []
        return True

    def single(self) -> None:
        j = self.text.find("'", self.i + 1)
        end = self.n if j == -1 else j
        if end == self.i + 1:
            self.flush_lit()
            self.add_part(Part("", self.i, quoted=True))
        if end > self.i + 1:
            self.add_lit(self.text[self.i + 1:end], self.i + 1, True)
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

    def dollar(self, quoted: bool) -> None:
        text, i = self.text, self.i
        nxt = text[i + 1] if i + 1 < self.n else ""
        if nxt == "'" and not quoted:                      # $'...' (escapes kept simple)
            self.i += 1
            self.single()
            return
        if nxt == "(":
            end = _matching(text, i + 1)
            what = "arithmetic" if text.startswith("((", i + 1) else "command substitution"
            self.flush_lit()
            # the text stands in for the value: it must stay one plain word when a `bash -c`
            # string holding it is split again
            self.add_part(Part("$(...)", i, var=True, quoted=quoted,
                               opaque=f"{what} {text[i:end][:60]!r} is computed at run time"))
            self.i = end
            return
        if nxt == "{":
            end = _brace_end(text, i + 2)
            self.flush_lit()
            self.add_part(_braced(text[i + 2:end], i, quoted, self.depth))
            self.i = end + 1
            return
        m = _NAME.match(text, i + 1)
        if m:
            self.flush_lit()
            self.add_part(Part(m.group(0), i, var=True, quoted=quoted))
            self.i = m.end()
            return
        if nxt and (nxt.isdigit() or nxt in "@*#?$!-"):
            self.flush_lit()
            self.add_part(Part("$" + nxt, i, var=True, quoted=quoted,
                               opaque=f"${nxt} is given when the script is run"))
            self.i = i + 2
            return
        self.add_lit("$", i, quoted)
        self.i = i + 1

    def backquote(self) -> None:
        j = self.text.find("`", self.i + 1)
        end = self.n if j == -1 else j + 1
        self.flush_lit()
        self.add_part(Part("`...`", self.i, var=True,
                           opaque="a `...` command substitution is computed at run time"))
        self.i = end

    def skip_heredocs(self) -> None:
        for delimiter in self.heredocs:
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


def _braced(inner: str, at: int, quoted: bool, depth: int = 0) -> Part:
    """``${NAME}``, ``${NAME:-default}``, ``${NAME[@]}``; anything else is opaque. A default
    holding references (``${A:-${B}/x}``) keeps them as parts, nested at most 8 deep."""
    m = re.fullmatch(r"([A-Za-z_]\w*)(?:\[([@*])\])?(?:(:?-)(.*))?", inner, re.S)
    if m:
        default = m.group(4)
        parts: tuple[Part, ...] = ()
        # a default with references or quotes (``${A:-"x y"}``) is split like a word
        if default is not None and any(c in default for c in "$'\"\\") and depth < 8:
            start = at + 2 + m.start(4)
            lexer = _Lexer(default, depth + 1)
            lexer.lit_quoted = quoted
            lexer.run()
            words = [p for st in lexer.out.statements for w in st.words for p in w]
            parts = tuple(Part(p.text, p.offset + start, p.var, p.default,
                               p.default_parts, p.array, quoted, p.opaque) for p in words)
        return Part(m.group(1), at, var=True, default=default, default_parts=parts,
                    array=bool(m.group(2)), quoted=quoted)
    return Part("${" + inner[:60] + "}", at, var=True, quoted=quoted,
                opaque=f"${{{inner[:60]}}} is computed at run time")


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


def _literal(word: Word) -> str | None:
    """The word's text when it is all literal and unquoted (a keyword candidate)."""
    if all(not p.var and not p.quoted for p in word):
        return "".join(p.text for p in word)
    return None


def _assignment(word: Word) -> tuple[str, bool, Word] | None:
    """``NAME=value`` / ``NAME+=value``: (name, append, the value's parts)."""
    first = word[0]
    if first.var or first.quoted:
        return None
    m = _ASSIGN.match(first.text)
    if not m:
        return None
    rest = first.text[m.end():]
    value = ((Part(rest, first.offset + m.end()),) if rest else ()) + word[1:]
    return m.group(1), bool(m.group(2)), value


def split(text: str) -> Split:
    """The statements of a shell script (see the module docstring)."""
    return _Lexer(text).run()
