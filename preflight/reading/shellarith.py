"""Bash arithmetic (``(( N > 1 ))``, ``for ((i = 0; i < N; i++))``) evaluated where every
name it reads holds an integer here; nothing is run.

redteam11 (session 38): ``for ((i = 0; i < 0; i++)); do EXTRA=--fp8...; done`` was read as
running (the lexer took ``((`` for two subshells, ``i=0`` for an assignment and ``< 0`` for a
redirection), and ``if (( 0 )); then`` opened a branch with no test, read as an ``else`` that
runs. Now the lexer keeps ``((...))`` as one word (:mod:`.shellwords`) and this module decides
it: a ``for ((INIT; COND; STEP))`` body runs when ``COND`` holds after ``INIT`` (an empty
``COND`` is 1: bash's endless loop), ``(( E ))`` succeeds when ``E`` is not 0 (bash(1),
"ARITHMETIC EVALUATION", "Compound Commands"). Integers, names, ``$NAME`` / ``${NAME}``, ``+ -
* / %``, comparisons, ``! && ||``, parentheses, ``=``, ``+=``, ``-=``, ``++`` / ``--`` and ``,``
are read; anything else (``?:``, bit operators, ``**``, arrays, ``$(...)``, a name holding no
integer here) makes the answer None: undecided, as a test on a run-time value. Bounded: at most
:data:`MAX_TEXT` characters, values kept to 64 bits as bash keeps them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MAX_TEXT = 400
"""Characters of one arithmetic expression read (a loop header: under 60)."""

_TOKEN = re.compile(r"\s*(?:(\d+)|\$\{([A-Za-z_]\w*)\}|\$?([A-Za-z_]\w*)|"
                    r"(\+\+|--|\+=|-=|&&|\|\||==|!=|<=|>=|[-+*/%<>!()=,]))")
_BINARY = [("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"), ("*", "/", "%")]
_MASK = (1 << 64) - 1


class _Stop(Exception):
    """Not evaluated here."""


def _wrap(n: int) -> int:
    n &= _MASK
    return n - (1 << 64) if n >> 63 else n


class _Parser:
    def __init__(self, text: str, env: dict[str, int], lookup: Callable[[str], str | None]
                 ) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                raise _Stop
            num, braced, name, op = m.groups()
            self.tokens.append(("n", num) if num else ("v", braced or name) if braced or name
                               else ("o", op))
            pos = m.end()
        self.i = 0
        self.env = env
        self.lookup = lookup

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, op: str) -> bool:
        if self.peek() == ("o", op):
            self.i += 1
            return True
        return False

    def value(self, name: str) -> int:
        if name in self.env:
            return self.env[name]
        held = self.lookup(name)
        if held is None or not re.fullmatch(r"\s*-?\d{1,18}\s*", held):
            raise _Stop           # a run-time value, or no integer
        return int(held)

    def comma(self) -> int:
        got = self.assign()
        while self.take(","):
            got = self.assign()
        return got

    def assign(self) -> int:
        tok = self.peek()
        nxt = self.tokens[self.i + 1] if self.i + 1 < len(self.tokens) else None
        if tok is not None and tok[0] == "v" and nxt in (("o", "="), ("o", "+="), ("o", "-=")):
            self.i += 2
            got = self.assign()
            old = self.value(tok[1]) if nxt[1] != "=" else 0
            self.env[tok[1]] = _wrap(old + got if nxt[1] == "+=" else old - got
                                     if nxt[1] == "-=" else got)
            return self.env[tok[1]]
        return self.binary(0)

    def binary(self, level: int) -> int:
        if level == len(_BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while (tok := self.peek()) is not None and tok[0] == "o" and tok[1] in _BINARY[level]:
            self.i += 1
            right = self.binary(level + 1)
            left = _apply(tok[1], left, right)
        return left

    def unary(self) -> int:
        for op in ("!", "-", "+", "++", "--"):
            if self.take(op):
                if op in ("++", "--"):
                    tok = self.peek()
                    if tok is None or tok[0] != "v":
                        raise _Stop
                    self.i += 1
                    self.env[tok[1]] = _wrap(self.value(tok[1]) + (1 if op == "++" else -1))
                    return self.env[tok[1]]
                got = self.unary()
                return int(not got) if op == "!" else _wrap(-got) if op == "-" else got
        return self.postfix()

    def postfix(self) -> int:
        tok = self.peek()
        if tok is None:
            raise _Stop
        self.i += 1
        if tok == ("o", "("):
            got = self.comma()
            if not self.take(")"):
                raise _Stop
            return got
        if tok[0] == "n":
            if len(tok[1]) > 18 or (len(tok[1]) > 1 and tok[1].startswith("0")):
                raise _Stop       # octal (bash reads 010 as 8) and huge literals: not here
            return int(tok[1])
        if tok[0] != "v":
            raise _Stop
        got = self.value(tok[1])
        for op, step in (("++", 1), ("--", -1)):
            if self.take(op):
                self.env[tok[1]] = _wrap(got + step)
        return got


def _apply(op: str, a: int, b: int) -> int:
    if op in ("/", "%"):
        if b == 0:
            raise _Stop           # bash: "division by 0", the command fails
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)    # C's truncation
        return _wrap(q if op == "/" else a - q * b)
    table = {"||": int(bool(a) or bool(b)), "&&": int(bool(a) and bool(b)), "==": int(a == b),
             "!=": int(a != b), "<": int(a < b), "<=": int(a <= b), ">": int(a > b),
             ">=": int(a >= b), "+": a + b, "-": a - b, "*": a * b}
    return _wrap(table[op])


def evaluate(text: str, lookup: Callable[[str], str | None],
             env: dict[str, int] | None = None) -> int | None:
    """The value of the expression ``text`` (names read through ``lookup`` where ``env``,
    the assignments made so far, does not hold them); None: not evaluated here."""
    if len(text) > MAX_TEXT:
        return None
    env = {} if env is None else env
    try:
        parser = _Parser(text, env, lookup)
        if not parser.tokens:
            return None
        got = parser.comma()
        return got if parser.i == len(parser.tokens) else None
    except (_Stop, RecursionError):
        return None


def succeeds(word: str, lookup: Callable[[str], str | None]) -> bool | None:
    """``((E))`` (the word as written): whether it succeeds (E not 0); None: not known here."""
    got = evaluate(word[2:-2], lookup) if is_arith(word) else None
    return None if got is None else got != 0


def loop_runs(word: str, lookup: Callable[[str], str | None]) -> bool | None:
    """``for ((INIT; COND; STEP))``: whether the body runs at least once; None: not known."""
    if not is_arith(word) or word.count(";") != 2:
        return None
    init, cond, _ = word[2:-2].split(";")
    env: dict[str, int] = {}
    if init.strip() and evaluate(init, lookup, env) is None:
        return None
    if not cond.strip():
        return True               # `for ((;;))`: runs until a `break`
    got = evaluate(cond, lookup, env)
    return None if got is None else got != 0


def is_arith(word: str) -> bool:
    return word.startswith("((") and word.endswith("))") and len(word) >= 4
