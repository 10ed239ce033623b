"""Bounds on the regular expressions of rule conditions (``matches``): a rule pack is user input.

Python's ``re`` backtracks and cannot be interrupted, so time is bounded three ways, all
decided before a match runs (issue 13; issue 21 item 6: ``.*a.*a.*...b`` on 4,000 a's ran 60 s):

- :func:`backtracking_hazard` refuses, at load and lint, the shapes that backtrack
  exponentially: nested unbounded repetition (``(a+)+``) and repeated groups whose alternatives
  overlap (``(a|ab)*``).
- :func:`degree` counts the polynomial ones: unbounded (or wide, more than
  :data:`WIDE` apart) repetitions in a row that can trade characters, each able to match what
  lies between it and the next and some of what the next matches. ``.*a.*b`` has degree 2
  (quadratic), ``.*a.*a.*b`` 3; ``\\s*-1\\s*,`` has 1 (``\\s`` cannot cross the ``-``). A degree
  over :data:`MAX_DEGREE` is refused at load and lint; the subject a pattern scans is capped by
  its degree (:func:`subject_limit`: :data:`MATCH_LIMIT` characters for a linear pattern,
  :data:`QUADRATIC_LIMIT` for a quadratic one), a longer value leaves the leaf undetermined.
- :func:`budget` / :func:`charge`: one evaluation of a rule set spends at most
  :data:`MATCH_BUDGET` estimated steps (length to the power of the degree) on matching; past it
  a ``matches`` leaf is undetermined, with that reason. Deterministic (no clock): the same facts
  and rules give the same report on any machine.

Measured (benchmarks/bench_regex.py): the worst pattern allowed, on the worst subject allowed,
takes milliseconds; the refused ``.*a.*a.*a.*b`` took 60 s on 4,000 characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

try:  # Python >= 3.11
    import re._constants as _sre_constants
    import re._parser as _sre_parse
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _sre_constants
    import sre_parse as _sre_parse

MATCH_LIMIT = 4096
"""The longest string a linear ``matches`` pattern is applied to."""
QUADRATIC_LIMIT = 1024
"""The longest string a quadratic (degree 2) pattern is applied to: 1024**2 steps at most."""
MAX_DEGREE = 2
"""Patterns of a higher degree (three wide repetitions that trade characters) are refused."""
WIDE = 32
"""A repetition whose bounds are further apart than this counts as unbounded."""
MATCH_BUDGET = 1 << 26
"""Estimated steps one evaluation may spend matching (64 quadratic scans of the longest
subject, 16,384 linear ones): past it, ``matches`` leaves are undetermined."""

_MAXREPEAT = _sre_constants.MAXREPEAT
_SPENT: ContextVar[list[int] | None] = ContextVar("fp8_doctor_match_budget", default=None)


@contextmanager
def budget() -> Iterator[None]:
    """A fresh matching budget for one evaluation (a context variable: per thread)."""
    token = _SPENT.set([0])
    try:
        yield
    finally:
        _SPENT.reset(token)


def charge(cost: int) -> bool:
    """Spend ``cost`` estimated steps; False (nothing spent) when the budget cannot pay."""
    spent = _SPENT.get()
    if spent is None:
        return True
    if spent[0] + cost > MATCH_BUDGET:
        spent[0] = MATCH_BUDGET + 1          # spent: every later match is refused too
        return False
    spent[0] += cost
    return True


def budget_spent() -> bool:
    """Whether this evaluation's budget ran out (a ``matches`` leaf then says so)."""
    spent = _SPENT.get()
    return spent is not None and spent[0] > MATCH_BUDGET


@lru_cache(maxsize=1024)
def subject_limit(pattern: str) -> int:
    """The longest value ``pattern`` is applied to (by its :func:`degree`)."""
    return MATCH_LIMIT if degree(pattern) <= 1 else QUADRATIC_LIMIT


def cost(pattern: str, length: int) -> int:
    """Estimated steps of one match of ``pattern`` on ``length`` characters."""
    return int((length + 1) ** max(degree(pattern), 1))   # int ** int: typeshed says Any


@lru_cache(maxsize=1024)
def degree(pattern: str) -> int:
    """The longest run of wide repetitions in ``pattern`` that can trade characters (0 for
    none); see the module docstring. Conservative: what it cannot analyse counts as trading."""
    try:
        parsed = list(_sre_parse.parse(pattern))
    except (re.error, OverflowError, RecursionError):
        return 0
    alphabet = _alphabet(parsed, pattern)
    best = [0]
    try:
        _walk(parsed, None, alphabet, best)
    except RecursionError:
        return MAX_DEGREE + 1
    return best[0]


_Chain = tuple[frozenset[str], int, bool]   # last wide class, run length, all since swallowable
_CATEGORY = {"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D", "CATEGORY_SPACE": r"\s",
             "CATEGORY_NOT_SPACE": r"\S", "CATEGORY_WORD": r"\w", "CATEGORY_NOT_WORD": r"\W"}
_SAMPLES = "\t\n\r \u00a0\u2003\u00e9\u00df\u0416\u4e2d\u0663\u00b2_"


def _name(op: Any) -> str:
    return getattr(op, "name", str(op))


def _alphabet(items: list[Any], pattern: str) -> str:
    """Characters to compare classes on: ASCII, samples of the Unicode categories, and every
    literal and range end of the pattern (two ranges that overlap share an end's neighbour)."""
    chars = set(map(chr, range(128))) | set(_SAMPLES) | set(pattern)
    todo = list(items)
    while todo:
        op, av = todo.pop()
        name = _name(op)
        if name in ("LITERAL", "NOT_LITERAL"):
            chars.add(chr(av))
        elif name == "RANGE":
            chars.update(chr(c) for c in (av[0], av[1], min(av[0] + 1, av[1])))
        elif name == "IN":
            todo += av
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            todo += list(av[2])
        elif name in ("SUBPATTERN", "ATOMIC_GROUP"):
            todo += list(av[-1])
        elif name == "BRANCH":
            todo += [item for alt in av[1] for item in alt]
    return "".join(sorted(chars))


def _class(items: list[Any], alphabet: str) -> frozenset[str]:
    """The characters of ``alphabet`` the first character of ``items`` can be (all when the
    shape is not one this knows)."""
    everything = frozenset(alphabet)
    if len(items) != 1:
        return everything
    op, av = items[0]
    name = _name(op)
    if name == "LITERAL":
        return frozenset({chr(av)})
    if name == "NOT_LITERAL":
        return everything - {chr(av)}
    if name == "ANY":
        return everything - {"\n"}
    if name != "IN":
        return everything
    out: set[str] = set()
    negate = False
    for sub, sav in av:
        sub_name = _name(sub)
        if sub_name == "NEGATE":
            negate = True
        elif sub_name == "LITERAL":
            out.add(chr(sav))
        elif sub_name == "RANGE":
            out.update(c for c in alphabet if sav[0] <= ord(c) <= sav[1])
        elif sub_name == "CATEGORY" and _name(sav) in _CATEGORY:
            rx = re.compile(_CATEGORY[_name(sav)])
            out.update(c for c in alphabet if rx.fullmatch(c))
        else:
            return everything
    both = {c.lower() for c in out} | {c.upper() for c in out}   # IGNORECASE: be generous
    chosen = frozenset(c for c in alphabet if c in both)
    return everything - chosen if negate else chosen


def _walk(items: list[Any], state: _Chain | None, alphabet: str, best: list[int]
          ) -> _Chain | None:
    for op, av in items:
        name = _name(op)
        if name in ("SUBPATTERN", "ATOMIC_GROUP"):
            state = _walk(list(av[-1]), state, alphabet, best)
        elif name == "BRANCH":
            ends = [_walk(list(alt), state, alphabet, best) for alt in av[1]]
            state = max((e for e in ends if e is not None), key=lambda e: e[1], default=state)
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue                                   # zero width: nothing to trade
        elif name in ("MAX_REPEAT", "MIN_REPEAT") and (av[1] == _MAXREPEAT or
                                                       av[1] - av[0] > WIDE):
            cls = _class(list(av[2]), alphabet)
            run = state[1] + 1 if state and state[2] and state[0] & cls else 1
            best[0] = max(best[0], run)
            state = (cls, run, True)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            # a narrow (or possessive) repetition: its body, once, in line (``(?:.*a)?.*b``);
            # repeating a body that holds a wide repetition is backtracking_hazard's refusal
            inner = _walk(list(av[2]), state, alphabet, best)
            if av[0] == 0 and state is not None:       # optional: skipping it is a path too
                paths: list[_Chain] = [e for e in (inner, state) if e is not None]
                state = max(paths, key=lambda e: (e[1], e[2]))
            else:
                state = inner
        elif state is not None:
            crosses = bool(state[0] & _class([(op, av)], alphabet))
            state = (state[0], state[1], state[2] and crosses)
    return state


def backtracking_hazard(pattern: str) -> str | None:
    """Why ``pattern`` can backtrack exponentially (the classic shapes), or None.

    Flags a quantifier that may repeat more than once around a sub-pattern that itself holds
    such a quantifier (``(a+)+``, ``(a*)*``, ``(a+)*b``, ``(\\w+\\s?)+$``), and a repeated
    group whose alternatives can start with the same character (``(a|a)+``, ``(a|b|ab)*``,
    ``(\\w|\\d)+``): either way ``re`` may try exponentially many ways to split one input.
    Possessive quantifiers and atomic groups do not backtrack and are left alone. Conservative
    on purpose: a character class it cannot enumerate counts as overlapping everything, so some
    harmless patterns are refused too (rewrite them with disjoint alternatives).
    See https://owasp.org/www-community/attacks/ReDoS.
    """
    try:
        parsed = _sre_parse.parse(pattern)
    except (re.error, OverflowError, RecursionError):  # pragma: no cover - compiled first
        return None
    try:
        return _hazard(list(parsed), inside_repeat=False)
    except RecursionError:
        return "the pattern is nested too deeply to check"


def _hazard(items: list[Any], *, inside_repeat: bool) -> str | None:
    for op, av in items:
        name = getattr(op, "name", str(op))
        found: str | None = None
        if name in ("MAX_REPEAT", "MIN_REPEAT"):
            _lo, hi, body = av
            repeats = hi > 1
            if repeats and inside_repeat and body.getwidth()[1] > 0:
                return "a repeated group contains another unbounded repetition, like (a+)+"
            found = _hazard(list(body), inside_repeat=inside_repeat or repeats)
        elif name == "SUBPATTERN":
            found = _hazard(list(av[-1]), inside_repeat=inside_repeat)
        elif name == "BRANCH":
            alts = av[1]
            if inside_repeat and _alternatives_overlap(alts):
                return ("a repeated group has alternatives that can start with the same "
                        "character, like (a|b|ab)*")
            for alt in alts:
                found = found or _hazard(list(alt), inside_repeat=inside_repeat)
        elif name in ("ASSERT", "ASSERT_NOT"):
            found = _hazard(list(av[1]), inside_repeat=inside_repeat)
        elif name == "GROUPREF_EXISTS":
            found = next((h for sub in av[1:] if sub is not None
                          for h in [_hazard(list(sub), inside_repeat=inside_repeat)] if h), None)
        if found:
            return found
    return None


_ANY: frozenset[int] = frozenset({-1})
"""Marker set: "could start with any character" (overlaps everything)."""


def _alternatives_overlap(alts: list[Any]) -> bool:
    seen: set[int] = set()
    for alt in alts:
        first = _first_chars(list(alt))
        if first is _ANY or seen & first:
            return True
        seen |= first
    return False


def _first_chars(items: list[Any]) -> frozenset[int]:
    """Lower-cased code points a match of ``items`` can start with, or ``_ANY`` when unsure."""
    if not items:
        return _ANY  # an empty alternative: overlaps (and repeats) anything
    op, av = items[0]
    name = getattr(op, "name", str(op))
    if name == "LITERAL":
        return frozenset({ord(chr(av).lower())})
    if name == "IN":
        out: set[int] = set()
        for sub_op, sub_av in av:
            sub = getattr(sub_op, "name", str(sub_op))
            if sub == "LITERAL":
                out.add(ord(chr(sub_av).lower()))
            elif sub == "RANGE" and sub_av[1] - sub_av[0] <= 256:
                out.update(ord(chr(c).lower()) for c in range(sub_av[0], sub_av[1] + 1))
            else:  # NEGATE, CATEGORY (\w, \d), wide ranges
                return _ANY
        return frozenset(out)
    if name == "SUBPATTERN":
        return _first_chars(list(av[-1]) + items[1:]) if av[-1].getwidth()[0] == 0 \
            else _first_chars(list(av[-1]))
    if name == "BRANCH":
        firsts = [_first_chars(list(a)) for a in av[1]]
        return _ANY if any(f is _ANY for f in firsts) else frozenset().union(*firsts)
    if name in ("MAX_REPEAT", "MIN_REPEAT") and av[0] > 0:
        return _first_chars(list(av[2]))
    return _ANY  # ANY (.), categories, optional parts, anchors, lookarounds: be conservative
