"""``if [ A ] && [ B ]; then``: a test of several commands joined by ``&&`` / ``||``, kept whole
for :mod:`.shellexpand` to decide (:attr:`.shelltypes.Statement.chain`).

bash runs ``A && B || C`` left to right, each operator as strong as the other; the branch runs
when the whole list succeeds. Pai-Megatron-Patch's run_mcore_qwen3.sh:349 (alibaba/
Pai-Megatron-Patch @ a098ca5a) turns on ``--sequence-parallel`` under ``if [ $SP = true ] && [
$TP -gt 1 ]``: with both values bound by the calling line, the arm is decided (holdout12). A
pipe (``[ a ] | b``) or more than :data:`MAX_CHAIN` parts leave the test undecided. ``{ ...; }``
groups and ``!`` are kept in the list (a ``}`` as ``("}", ())``) and :func:`evaluate` groups it
as bash does (redteam18).

Also :func:`loop_variable`: ``for f in ...; do CMD="$CMD $f"; done`` sets ``f`` each turn, to
values the walk (which reads a loop's body once) does not give it: a run-time value.
"""

from __future__ import annotations

from collections.abc import Callable
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
    # a `{` of the test still open is closed by a `}` read as a statement now (redteam18: it
    # was never opened, and the script was said to be one bash refuses)
    lexer.open_at.extend([(last.offset, "}")] * max(0, _open_groups(last)))


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
    last = lexer.out.statements[-1] if lexer.out.statements else None
    if last is not None and last.test is not None and not last.chain and last.words and \
            literal(last.words[-1]) == "{" and all(literal(w) in ("{", "!") for w in last.words):
        words = [*last.words, *words]   # `if {` then a newline: the group's first command
    kind = last.loop_test if last is not None else None
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
    B; then``'s B and the test became ``} && c``). Kept in the chain as ``("}", ())`` for
    :func:`evaluate`, which groups the list as bash does (redteam18: a group later in the test,
    ``A || { B && C; }``, or behind ``!`` was an opaque test). A ``}`` closing no ``{`` of this
    test (``if { A; B; }``: ``B`` replaced the test, the group's start is gone) leaves the test
    a compound one nobody decides here."""
    at = len(lexer.out.statements) - 1
    test = lexer.out.statements[at] if at >= 0 else None
    if test is None or test.test is None:
        return False
    if _open_groups(test) <= 0 or len(test.chain) >= MAX_CHAIN:
        lexer.out.statements[at] = replace(test, words=((Part(
            "[...]", test.offset, var=True, opaque="a compound test"),),), chain=())
    else:
        lexer.out.statements[at] = replace(test, chain=(*test.chain, ("}", ())))
    if sep in ("&&", "||", "|"):
        opened(lexer, sep)
    return True


def _open_groups(test: Statement) -> int:
    """``{`` opened minus ``}`` closed so far in ``test``'s list."""
    depth = 0
    for op, words in ((None, test.words), *test.chain):
        if op == "}":
            depth -= 1
            continue
        for word in words:
            if literal(word) == "{":
                depth += 1
            elif literal(word) != "!":
                break
    return depth


def evaluate(first: tuple[Word, ...], chain: tuple[tuple[str, tuple[Word, ...]], ...],
             test: Callable[[tuple[Word, ...]], bool | None]) -> bool | None:
    """Whether the list ``first`` then ``chain`` succeeds (None: not known here), ``test``
    deciding each command. bash: ``&&`` and ``||`` are equally strong and left-associative; ``!``
    negates the pipeline it starts (a ``{ ... }`` group or a command); a group's status is its
    list's (bash(1), "Lists", "Pipelines", "Compound Commands"). Done with a stack, not
    recursion: 5,000 nested ``{`` are a list of five thousand frames, not a RecursionError."""
    frames: list[list[Any]] = [[_UNSET, None, False]]     # value so far, operator, negated
    for op, words in ((None, first), *chain):
        if op == "}":
            if len(frames) < 2 or frames[-1][0] is _UNSET:
                return None                                # `}` opening nothing: bash refuses
            value, _, negated = frames.pop()
            _join(frames[-1], _not(value) if negated else value)
            continue
        frames[-1][1] = op
        negated, k = False, 0
        while k < len(words) and literal(words[k]) in ("!", "{"):
            if literal(words[k]) == "{":
                frames.append([_UNSET, None, negated])
                negated = False
            else:
                negated = not negated
            k += 1
        if k == len(words):
            return None                                    # `! ;`, `{ ;`: bash refuses
        got = test(words[k:])
        _join(frames[-1], _not(got) if negated else got)
    return frames[0][0] if len(frames) == 1 and frames[0][0] is not _UNSET else None


_UNSET = object()


def _not(value: Any) -> bool | None:
    return None if value is None else not value


def _join(frame: list[Any], more: bool | None) -> None:
    """``frame``'s value joined to ``more`` by its operator, as three-valued logic."""
    got, op = frame[0], frame[1]
    if got is _UNSET:
        frame[0] = more
    elif op == "&&":
        frame[0] = False if False in (got, more) else None if None in (got, more) else True
    else:
        frame[0] = True if True in (got, more) else None if None in (got, more) else False
