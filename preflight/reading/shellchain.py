"""``if [ A ] && [ B ]; then``: a test of several commands joined by ``&&`` / ``||``, kept whole
for :mod:`.shellexpand` to decide (:attr:`.shelltypes.Statement.chain`).

bash runs ``A && B || C`` left to right, each operator as strong as the other; the branch runs
when the whole list succeeds. Pai-Megatron-Patch's run_mcore_qwen3.sh:349 (alibaba/
Pai-Megatron-Patch @ a098ca5a) turns on ``--sequence-parallel`` under ``if [ $SP = true ] && [
$TP -gt 1 ]``: with both values bound by the calling line, the arm is decided (holdout12). A
pipe (``[ a ] | b``) or more than :data:`MAX_CHAIN` parts leave the test undecided.

Also :func:`loop_variable`: ``for f in ...; do CMD="$CMD $f"; done`` sets ``f`` each turn, to
values the walk (which reads a loop's body once) does not give it: a run-time value.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from preflight.reading.shelltypes import Part, Statement, Word, literal

MAX_CHAIN = 16
"""Commands joined in one test (a real one has two or three)."""


def opened(lexer: Any, sep: str) -> None:
    """The statement just split is (the first part of) an if/elif test ended by ``sep``."""
    at = len(lexer.out.statements) - 1
    last = lexer.out.statements[at]
    if sep in ("&&", "||") and len(last.chain) < MAX_CHAIN:
        lexer.pending = (at, sep)       # the next command is more of the same test
        return
    lexer.testing = False               # what follows is no test of its own
    lexer.out.statements[at] = replace(last, words=((Part(
        "[...]", last.offset, var=True, opaque="a compound test"),),), chain=())


def merged(lexer: Any, words: list[Word], sep: str) -> bool:
    """``words`` joined to the test waiting for them (True), when there is one."""
    if lexer.testing and len(words) == 1 and literal(words[0]) == "}" and lexer.pending is None:
        return _group_closed(lexer, sep)
    if lexer.pending is None:
        return False
    at, op = lexer.pending
    lexer.pending = None
    if literal(words[0]) in ("then", "do", "if", "case", "fi"):
        return False
    test = lexer.out.statements[at]
    lexer.out.statements[at] = replace(test, chain=(*test.chain, (op, tuple(words))))
    if sep in ("&&", "||", "|"):
        opened(lexer, sep)
    lexer.chained = False
    return True


def more_test(lexer: Any, words: list[Word], first: str | None) -> bool:
    """``if A; B; then``: bash runs the list and decides by its last command's status, so each
    command before ``then`` replaces the test (True: ``words`` is the test now). redteam10: the
    first command decided, and ``if [ $P = fp8 ]; [ $Q = 1 ]; then`` read FP8 both ways."""
    if first in ("then", "do"):         # `do`: a while/until test (reading/shellloops.py)
        lexer.testing = False
        return False
    kind = lexer.out.statements[-1].loop_test if lexer.out.statements else None
    lexer.opened(words)
    if kind is not None:                # `until A; B; do`: still a loop's test
        lexer.out.statements[-1] = replace(lexer.out.statements[-1], loop_test=kind)
    return True


def loop_variable(words: list[Word], branch: tuple[int, ...]) -> list[Statement]:
    """``for NAME in ...``: NAME assigned a run-time value (none: not such a loop)."""
    name = literal(words[1]) if len(words) > 1 else None
    if not name or not name.isidentifier():
        return []
    return [Statement(((Part(f"${name}", words[1][0].offset, opaque=(
        "the variable of a for loop")),),), words[0][0].offset, branch, name)]


def _group_closed(lexer: Any, sep: str) -> bool:
    """``if { [[ a ]] || [[ b ]]; } && [[ c ]]; then`` (holdout24 DGX Cloud llama3.1
    launch.sh:116): the ``}`` ends a group of the test, not the test (it was taken for ``if A;
    B; then``'s B and the test became ``} && c``). A group that opens the test is read as the
    flat list (bash's ``&&`` / ``||`` are left-associative, so ``{ A || B; } && C`` is
    ``A || B && C``); a group later in the test (``A && { B || C; }``) is a compound test."""
    at = len(lexer.out.statements) - 1
    test = lexer.out.statements[at] if at >= 0 else None
    if test is None or test.test is None:
        return False
    lead = bool(test.words) and literal(test.words[0]) == "{"
    if not lead or any(literal(ws[0]) in ("{", "}") for _, ws in test.chain if ws):
        lexer.out.statements[at] = replace(test, words=((Part(
            "[...]", test.offset, var=True, opaque="a compound test"),),), chain=())
        lexer.testing = False
        return True
    lexer.out.statements[at] = replace(test, words=test.words[1:])
    if sep in ("&&", "||", "|"):
        opened(lexer, sep)
    return True
