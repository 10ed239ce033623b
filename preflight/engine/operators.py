"""The operator table of rule conditions: value checks at load time, closures for evaluation.

``build_test(op, fact_type, value, ...)`` validates a leaf's ``value`` against the fact's
registered type and returns ``test(fact_value) -> True | False | None`` for a *present, known*
fact (absent and Unknown facts are handled by the leaf in :mod:`preflight.engine.conditions`).

Where the registered type makes a mismatch knowable it is a load error (``lt`` on a ``str`` fact,
``value: 1`` for a ``str`` fact, ``contains`` on a ``bool``, an unquoted version). For facts of
type ``any`` (config values) a mismatch found at evaluation is simply false. Equality is JSON
equality: ``true`` is not ``1``, ``"1"`` is not ``1``, ``1`` equals ``1.0``. On ``version`` facts
``eq ne lt le gt ge in not_in`` compare PEP 440 versions (see :mod:`preflight.base.versions`),
on ``cc`` facts ``(major, minor)`` tuples; a fact value that does not parse gives None
(undetermined), never an exception.

``matches`` is guarded against catastrophic backtracking, since a ``--rules`` file is user input
(:mod:`preflight.engine.regexbounds`): patterns with nested unbounded quantifiers (``(a+)+``) or a
repeated group with duplicate alternatives (``(a|a)+``) are load errors, so are three unbounded
repetitions in a row that can match the same text (``.*a.*a.*b``), and a value longer than the
pattern's subject limit, or past the evaluation's matching budget, is not scanned (the leaf is
undetermined).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from preflight.base.cc import parse_cc, parse_rule_cc
from preflight.base.versions import (
    InvalidRange,
    VersionMatcher,
    comparison_key,
    compile_matcher,
)
from preflight.engine import regexbounds
from preflight.engine.model import Reporter
from preflight.engine.regexbounds import MATCH_LIMIT, backtracking_hazard

Test = Callable[[Any], "bool | None"]

OPERATORS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "exists", "missing",
             "version_in", "matches", "contains", "type_is")
JSON_TYPES = {
    "str": (str,), "int": (int,), "float": (float,), "bool": (bool,), "list": (list,),
    "dict": (dict,), "null": (type(None),),
}
_ORDER_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
              "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


__all__ = ["MATCH_LIMIT", "OPERATORS", "backtracking_hazard", "build_test"]


class CompileError(Exception):
    """Internal: abandons one leaf after its problem was reported."""


def json_eq(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: ``true`` is not ``1``, ``1`` equals ``1.0``, ``"1"`` is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    return bool(a == b)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


VERSION_OPS = {"eq", "ne", "lt", "le", "gt", "ge", "in", "not_in"}


def _key_fn(ftype: str) -> Callable[[Any], Any] | None:
    """For version / cc facts: fact value -> comparison key (None = does not parse)."""
    if ftype == "version":
        return lambda v: comparison_key(v) if isinstance(v, str) else None
    if ftype == "cc":
        return parse_cc  # facts are parsed one way everywhere (preflight.base.cc)
    return None


def _check_scalar(ftype: str, value: Any, rep: Reporter, where: tuple[Any, ...], fact: str) -> Any:
    """Validate one comparison value against the fact type; return its comparison form."""
    def bad(msg: str) -> CompileError:
        rep.error(where, msg)
        return CompileError()

    if ftype == "version":
        if not isinstance(value, str):
            raise bad(_unquoted(fact, rep.as_written(where, value)))
        key = comparison_key(value)
        if key is None:
            raise bad(f"{value!r} is not a PEP 440 version (fact {fact} is a version)")
        return key
    if ftype == "cc":
        if not isinstance(value, str):
            raise bad(f"compute capability values must be quoted \"major.minor\" strings "
                      f"(YAML read {value!r}; write \"{value}\")")
        cc = parse_rule_cc(value)
        if cc is None:
            raise bad(f"{value!r} is not a compute capability; write \"major.minor\" like \"9.0\"")
        return cc
    if ftype == "bool" and not isinstance(value, bool):
        raise bad(f"fact {fact} is a bool; the value must be true or false, not {value!r}")
    if ftype == "int" and (not isinstance(value, int) or isinstance(value, bool)):
        raise bad(f"fact {fact} is an int; the value must be an integer, not {value!r}")
    if ftype == "float" and not _is_number(value):
        raise bad(f"fact {fact} is a number; the value must be a number, not {value!r}")
    if ftype == "str" and not isinstance(value, str):
        raise bad(f"fact {fact} is a string; quote the value (YAML read {value!r} as "
                  f"{type(value).__name__})")
    if ftype in ("list", "dict") and not isinstance(value, list if ftype == "list" else dict):
        raise bad(f"fact {fact} is a {ftype}; the value must be a {ftype}, not {value!r}")
    return value


def _unquoted(fact: str, written: str) -> str:
    return (f"versions must be quoted strings: fact {fact} is a version but {written} is not "
            f"quoted, so YAML reads it as a number (2.10 becomes 2.1); write \"{written}\"")


def _eq_test(ftype: str, cv: Any) -> Test:
    keyf = _key_fn(ftype)
    if keyf is not None:
        def eq_key(v: Any) -> bool | None:
            k = keyf(v)
            return None if k is None else k == cv
        return eq_key
    return lambda v: json_eq(v, cv)


@dataclass(frozen=True)
class _Ctx:
    """What an operator's builder needs: the rule's value, the fact, and where to report."""

    op: str
    ftype: str
    value: Any
    fact: str
    rep: Reporter
    where: tuple[Any, ...]

    def bad(self, msg: str) -> CompileError:
        self.rep.error(self.where, msg)
        return CompileError()


def _presence(c: _Ctx) -> Test:
    return (lambda v: True) if c.op == "exists" else (lambda v: False)


def _equality(c: _Ctx) -> Test:
    t = _eq_test(c.ftype, _check_scalar(c.ftype, c.value, c.rep, c.where, c.fact))
    if c.op == "eq":
        return t
    return lambda v: (lambda r: None if r is None else not r)(t(v))


def _membership(c: _Ctx) -> Test:
    if not isinstance(c.value, list) or not c.value:
        raise c.bad(f"{c.op} takes a non-empty list of values, not {c.value!r}")
    tests = [_eq_test(c.ftype, _check_scalar(c.ftype, x, c.rep, (*c.where, i), c.fact))
             for i, x in enumerate(c.value)]
    negate = c.op == "not_in"

    def member(v: Any) -> bool | None:
        und = False
        for t in tests:
            r = t(v)
            if r is True:
                return not negate
            if r is None:
                und = True
        return None if und else negate
    return member


def _order(c: _Ctx) -> Test:
    cmp = _ORDER_OPS[c.op]
    if c.ftype in ("version", "cc"):
        cv = _check_scalar(c.ftype, c.value, c.rep, c.where, c.fact)
        keyf = _key_fn(c.ftype)
        assert keyf is not None

        def ordered(v: Any) -> bool | None:
            k = keyf(v)
            return None if k is None else cmp(k, cv)
        return ordered
    if c.ftype in ("int", "float", "any"):
        if not _is_number(c.value):
            raise c.bad(f"{c.op} compares numbers (or versions / compute capabilities on facts "
                        f"of those types); {c.value!r} is not a number")
        value = c.value
        return lambda v: _is_number(v) and cmp(v, value)
    raise c.bad(f"{c.op} cannot compare fact {c.fact} of type {c.ftype}; it works on numbers, "
                "versions and compute capabilities (use eq / in / matches instead)")


def _version_in(c: _Ctx) -> Test:
    if c.ftype not in ("version", "str", "any"):
        raise c.bad(f"version_in needs a version fact; {c.fact} is of type {c.ftype}")
    found = c.rep.unquoted_number(c.where, c.value)
    if found:
        c.rep.error(found[0], f"versions must be quoted strings: {found[1]} is not quoted, "
                              f"so YAML reads it as a number (2.10 becomes 2.1); "
                              f"write \"{found[1]}\"")
        raise CompileError()
    try:
        matcher: VersionMatcher = compile_matcher(c.value, "value")
    except InvalidRange as exc:
        raise c.bad(str(exc)) from None
    return matcher.contains


def _matches(c: _Ctx) -> Test:
    if c.ftype not in ("str", "version", "cc", "any"):
        raise c.bad(f"matches needs a string fact; {c.fact} is of type {c.ftype}")
    if not isinstance(c.value, str):
        raise c.bad(f"matches takes a quoted regular expression, not {c.value!r}")
    try:
        rx = re.compile(c.value)
    except (re.error, OverflowError, RecursionError, ValueError) as exc:
        # OverflowError: a{99999999999}; RecursionError: thousands of nested groups.
        raise c.bad(f"bad regular expression {c.value!r}: {exc}") from None
    danger = backtracking_hazard(c.value)
    if danger:
        raise c.bad(f"regular expression {c.value!r} can take exponential time ({danger}); "
                    "rewrite it without the nested repetition") from None
    deg = regexbounds.degree(c.value)
    if deg > regexbounds.MAX_DEGREE:
        raise c.bad(f"regular expression {c.value!r} can take polynomial time of degree {deg} "
                    f"({deg} unbounded repetitions in a row that can match the same text, like "
                    ".*a.*a.*b): at most 2 are allowed; anchor the parts with characters the "
                    "repetitions cannot match ([^a]*a), or split the test into several leaves")
    full = rx.fullmatch  # anchored: the whole value must match
    pattern, limit = c.value, regexbounds.subject_limit(c.value)

    def matches(v: Any) -> bool | None:
        if not isinstance(v, str):
            return False
        if len(v) > limit or not regexbounds.charge(regexbounds.cost(pattern, len(v))):
            return None  # not scanned: see Leaf.reason
        return full(v) is not None
    return matches


def _contains(c: _Ctx) -> Test:
    if c.ftype not in ("list", "any"):
        raise c.bad(f"contains needs a list fact; {c.fact} is of type {c.ftype}")
    if isinstance(c.value, (list, dict)):
        raise c.bad(f"contains takes one scalar value to look for, not {c.value!r}")
    value = c.value
    return lambda v: isinstance(v, list) and any(json_eq(x, value) for x in v)


def _type_is(c: _Ctx) -> Test:
    if c.value not in JSON_TYPES:
        raise c.bad(f"type_is takes one of {', '.join(JSON_TYPES)}, not {c.value!r}")
    if c.value == "int":
        return lambda v: isinstance(v, int) and not isinstance(v, bool)
    types = JSON_TYPES[c.value]
    return lambda v: isinstance(v, types)


# The operator table (after packaging.markers' `_operators`): one builder per operator; the
# vocabulary is closed (OPERATORS), and a test below keeps the two in step.
_BUILDERS: dict[str, Callable[[_Ctx], Test]] = {
    "exists": _presence, "missing": _presence, "eq": _equality, "ne": _equality,
    "in": _membership, "not_in": _membership, **{op: _order for op in _ORDER_OPS},
    "version_in": _version_in, "matches": _matches, "contains": _contains, "type_is": _type_is,
}


def build_test(op: str, ftype: str, value: Any, fact: str, rep: Reporter,
               where: tuple[Any, ...]) -> Test:
    """The compiled test of one ``{fact, op, value}`` leaf; reports and raises
    :class:`CompileError` for a value the operator cannot take."""
    return _BUILDERS[op](_Ctx(op, ftype, value, fact, rep, (*where, "value")))
