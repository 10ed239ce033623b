"""Which if/case branch each ``--flag`` of a Megatron-family script read text-wide stands in,
and what that leaves of it (issue 22: reading the job as it is written).

When no training launch is walked (:mod:`.megatron_walk`: a file of variables another script
sources, an argument file, a launch the shell kit cannot follow), :func:`.megatron_args.
read_args_text` reads every ``--flag`` of the text. Until session 42 a flag written in any
``if`` / ``elif`` / ``else`` / ``case`` arm became a fact as if given: a reduced ModelZoo wrapper
(NVIDIA/Megatron-LM MoE model zoo ``sbatch_benchmarking.sh``) that writes
``--fp8-recipe mxfp8`` under ``if [[ ${PR} == "mxfp8" ]]`` and CPU offload under another arm was
read as MXFP8 + CPU offload under ``PR=fp8`` (session 41), every arm merged.

Now the text is split and its branches decided as the walk decides them (:mod:`.shellwords`,
:class:`.shellexpand.Eval`, with the variables the caller binds): a flag outside any branch, or
in one that runs, is read as before; one in a branch that never runs is no flag; one in a
branch not decided here (an ``if`` / ``case`` arm on a run-time value, the command after ``&&`` /
``||``, a loop body whose test is not known, the body of a function this file never calls or
calls only in such a branch: :mod:`.shellfuncs`) is Unknown with the line of that branch, unless
every arm of one ``if ... else`` / ``case ... *)`` gives it the same value (decided either way).
Python text (miles' ``run_*.py`` read by slime) is no shell: read as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.facts import Unknown
from preflight.reading.shellexpand import Eval, TooLarge
from preflight.reading.shellfuncs import Functions, functions
from preflight.reading.shelltypes import Split, Statement, literal
from preflight.reading.shellwords import split

_KEYWORDS = re.compile(r"(?<![\w-])(?:if|case|while|until|for)(?![\w-])|&&|\|\||\(\)\s*\{")


@dataclass(frozen=True)
class Where:
    """Whether the statement at an offset runs: True (outside any branch, or in ones that run),
    False (in a branch that never runs), None (not decided: ``why`` names the branch line)."""

    runs: bool | None
    why: str = ""
    arm: tuple[int, int] | None = None
    """(if/case, arm) when the one branch not decided is an arm of an if/case that runs."""


SURE = Where(True)


@dataclass
class Branches:
    """The branches of one shell text (:func:`branches`), looked up by offset (:meth:`at`)."""

    starts: list[int] = field(default_factory=list)    # statement offsets, sorted
    wheres: list[Where] = field(default_factory=list)  # per statement in ``starts``
    groups: dict[int, tuple[list[int], bool]] = field(default_factory=dict)
    """Per if/case (its first arm): its arms and whether one of them always matches (``else``,
    a ``*)`` arm)."""
    runs: dict[int, bool | None] = field(default_factory=dict)
    cut: int | None = None      # past it the text was not split (the shell kit's bounds)
    cut_why: str = ""

    def at(self, offset: int) -> Where:
        if self.cut is not None and offset >= self.cut:
            return Where(None, self.cut_why) if self.cut_why else SURE
        k = _bisect(self.starts, offset) - 1
        return self.wheres[k] if k >= 0 else SURE


def _bisect(starts: list[int], offset: int) -> int:
    from bisect import bisect_right

    return bisect_right(starts, offset)


def branches(path: str, text: str, outer: dict[str, str] | None) -> Branches | None:
    """The branches of ``text`` (None: Python, or no if/case/loop/``&&``/function at all)."""
    if path.endswith(".py") or not _KEYWORDS.search(text):
        return None
    words = split(text)
    out = Branches()
    line = _Lines(text)
    if words.truncated_at is not None:
        out.cut = words.truncated_at
        if _KEYWORDS.search(text, words.truncated_at):
            out.cut_why = (f"written past line {line(out.cut)}, where the script is too large to "
                           "split here, with if/case branches after it: whether it is given is "
                           "not known")
    tests: dict[int, tuple[int, int]] = {}     # branch -> (its if/case, offset of its test)
    for st in words.statements:
        if st.test is not None:
            _group(out, tests, st)
    ev = Eval(outer)
    try:
        ev.prepare(words)
        for st in words.statements:
            ev.step(st)
        out.runs = ev.runs
    except TooLarge:
        pass        # the shell kit's budget: nothing decided, every branch unknown
    funcs = _functions(text, outer, words)
    for offset, branch in sorted(((st.offset, st.branch) for st in words.statements),
                                 key=lambda r: r[0]):
        out.starts.append(offset)
        out.wheres.append(_where(out, tests, line, branch, offset) if branch else SURE)
        if funcs is not None and out.wheres[-1].runs is not False:
            held = _in_function(funcs, offset, line)
            if held is not None:
                out.wheres[-1] = held
    return out


def _group(out: Branches, tests: dict[int, tuple[int, int]], st: Statement) -> None:
    """Record the arm ``st`` opens in its if/case (loops are no if/case)."""
    assert st.test is not None
    arm, before = st.test
    if st.loop_test is not None:
        tests[arm] = (-1, st.offset)
        return
    group = before[0] if before else arm
    tests[arm] = (group, st.offset)
    arms, always = out.groups.get(group, ([], False))
    arms.append(arm)
    always = always or (not st.words and st.patterns is None) or any(
        literal(p) == "*" for p in st.patterns or ())
    out.groups[group] = (arms, always)


class _Lines:
    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def __call__(self, offset: int) -> int:
        return _bisect(self.starts, offset)


def _where(out: Branches, tests: dict[int, tuple[int, int]], line: _Lines,
           branch: tuple[int, ...], offset: int) -> Where:
    got = [out.runs.get(b) for b in branch]
    if False in got:
        return Where(False)
    if all(g is True for g in got):
        return SURE
    inner = max(n for n, g in enumerate(got) if g is not True)
    b = branch[inner]
    group, at = tests.get(b, (-2, offset))
    if group == -2:
        why = f"in a command after && / || (line {line(at)})"
    elif group == -1:
        why = f"in a loop body whose test is not decided here (line {line(at)})"
    else:
        why = f"in an if/case branch the text does not decide (line {line(at)})"
    alone = sum(g is not True for g in got) == 1 and group >= 0
    return Where(None, why, (group, b) if alone else None)


def _functions(text: str, outer: dict[str, str] | None, words: Split) -> Functions | None:
    if not words.functions:
        return None
    known = tuple(sorted((k, v) for k, v in (outer or {}).items()
                         if not re.search(r"[$`]", v) and not k.startswith("@")))
    return functions(text, known)


def _in_function(funcs: Functions, offset: int, line: _Lines) -> Where | None:
    """A statement in a function body runs when a call of it in the script's own shell runs
    (:mod:`.shellfuncs`); None: in no function, or one such call runs."""
    n = funcs.holding(offset)
    if n is None or n >= len(funcs.names):
        return None
    name = funcs.names[n]
    calls = [c for c in funcs.calls if c.name == name]
    if any(c.runs is True for c in calls):
        return None
    head = line(funcs.spans[n][0])
    if not funcs.decided:
        return Where(None, f"in function {name} (line {head}), whose calls are not decided "
                           "here (the script is too large to walk)")
    if not calls or all(c.runs is False for c in calls):
        return Where(None, f"in function {name} (line {head}), which this file never calls")
    at = next(c.line for c in calls if c.runs is None)
    return Where(None, f"in function {name} (line {head}), called at line {at} in a branch "
                       "not decided here")


@dataclass(frozen=True)
class Seen:
    """One occurrence of a flag: its value, line and :class:`Where`."""

    value: Any
    line: int
    where: Where


def resolve(flag: str, seen: Sequence[Seen], marks: Branches) -> Seen | None:
    """What argparse keeps of ``flag`` (``--name``) given where each occurrence stands: the last
    sure one, unless a later one in a branch not decided may replace it (Unknown naming that
    branch, or the value when every arm of one if/else or case gives the same); None when
    every occurrence is in a branch that never runs."""
    live = [s for s in seen if s.where.runs is not False]
    if not live:
        return None
    last = max((n for n, s in enumerate(live) if s.where.runs), default=-1)
    sure = live[last] if last >= 0 else None
    after = live[last + 1:]
    if not after:
        return sure
    if sure is not None and all(repr(s.value) == repr(sure.value) for s in after):
        return sure
    every = _every_arm(after, marks)
    if every is not None:
        return every
    odd = next((s for s in after if sure is None or repr(s.value) != repr(sure.value)), after[-1])
    return Seen(Unknown(f"{flag} is set at line {odd.line}, {odd.where.why}: whether it reaches "
                        "the training launch is not known"), odd.line, odd.where)


def _every_arm(after: Sequence[Seen], marks: Branches) -> Seen | None:
    """The value when ``after`` are each in an arm of one if/case that always takes an arm,
    every arm that may run gives the flag, and all the same value."""
    arms = {s.where.arm for s in after}
    if None in arms or len({a[0] for a in arms if a}) != 1:
        return None
    group = next(a[0] for a in arms if a)
    members, always = marks.groups.get(group, ([], False))
    given = {a[1] for a in arms if a}
    if not always or any(m not in given and marks.runs.get(m) is not False for m in members):
        return None
    last: dict[int, Seen] = {}
    for s in after:
        assert s.where.arm is not None
        last[s.where.arm[1]] = s    # argparse: the last one in each arm
    values = {repr(s.value) for s in last.values()}
    return after[-1] if len(values) == 1 else None
