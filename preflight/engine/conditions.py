"""Rule conditions: a closed operator table, compiled at load time to closures, three-valued.

Grammar (YAML data, never text that is parsed or evaluated)::

    condition = {all: [condition, ...]} | {any: [condition, ...]} | {not: condition} | leaf
    leaf      = {fact: NAME, op: OPERATOR, value: VALUE}      # no value for exists / missing

Evaluation returns ``True`` (holds), ``False`` (does not hold) or ``None`` (undetermined):

- a leaf on an ``Unknown`` fact is undetermined; so is a version / cc comparison whose fact value
  does not parse (``"unknown"``), with the reason;
- a leaf on an *absent* fact is false, except ``missing`` (true);
- ``all``: false if any child is false, else undetermined if any is, else true;
- ``any``: true if any child is true, else undetermined if any is, else false;
- ``not``: inverts; undetermined stays undetermined.

The operators themselves (and their load-time type checks) are in
:mod:`preflight.engine.operators`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from preflight.base.cc import parse_cc
from preflight.base.versions import version_problem
from preflight.engine.model import Reporter
from preflight.engine.operators import (
    OPERATORS,
    VERSION_OPS,
    CompileError,
    Test,
    build_test,
)
from preflight.engine.regexbounds import budget_spent, subject_limit
from preflight.facts import Unknown
from preflight.registry import registry

Values = Mapping[str, Any]
_LEAF_KEYS = {"fact", "op", "value"}
_ABSENT = object()


# --- nodes -------------------------------------------------------------------------------------

class Node:
    """A compiled condition. ``fn(values)`` is the fast path; the rest explains outcomes."""

    fn: Callable[[Values], bool | None]

    def fact_names(self) -> list[str]:
        raise NotImplementedError

    def deciding(self, values: Values, result: bool | None) -> list[Leaf]:
        """The leaves that decided ``result`` (which ``fn(values)`` returned)."""
        raise NotImplementedError

    def to_data(self) -> Any:
        raise NotImplementedError


class Leaf(Node):
    """``{fact, op, value}``."""

    def __init__(self, fact: str, op: str, value: Any, ftype: str, test: Test) -> None:
        self.fact, self.op, self.value, self.ftype = fact, op, value, ftype
        absent = op == "missing"
        name = fact

        def leaf(values: Values) -> bool | None:
            v = values.get(name, _ABSENT)
            if v is _ABSENT:
                return absent
            if v.__class__ is Unknown:
                return None
            return test(v)

        self.fn = leaf

    def fact_names(self) -> list[str]:
        return [self.fact]

    def deciding(self, values: Values, result: bool | None) -> list[Leaf]:
        return [self]

    def reason(self, values: Values) -> str | None:
        """Why this leaf is undetermined for ``values`` (None when it is not)."""
        v = values.get(self.fact, _ABSENT)
        if isinstance(v, Unknown):
            return v.reason
        if v is _ABSENT:
            return None
        if self.ftype == "cc" and self.op not in ("exists", "missing", "type_is", "matches"):
            return None if parse_cc(v) else f"{v!r} is not a compute capability \"major.minor\""
        if self.op == "version_in" or (self.ftype == "version" and self.op in VERSION_OPS):
            return version_problem(v)
        if self.op == "matches" and isinstance(v, str) and isinstance(self.value, str):
            limit = subject_limit(self.value)
            if len(v) > limit:
                return (f"the value is {len(v)} characters long; matches scans at most "
                        f"{limit} with this pattern (a bound on regular-expression time)")
            if budget_spent():
                return ("this evaluation's budget for regular-expression matching is spent "
                        "(a bound on time: too many long values to match)")
        return None

    def to_data(self) -> Any:
        d: dict[str, Any] = {"fact": self.fact, "op": self.op}
        if self.op not in ("exists", "missing"):
            d["value"] = self.value
        return d


class All(Node):
    """``{all: [...]}``: false if any child is false, else undetermined if any is, else true."""

    def __init__(self, children: list[Node]) -> None:
        self.children = children
        fns = tuple(c.fn for c in children)

        def all_(values: Values) -> bool | None:
            und = False
            for f in fns:
                r = f(values)
                if r is False:
                    return False
                if r is None:
                    und = True
            return None if und else True

        self.fn = all_

    def fact_names(self) -> list[str]:
        return _unique(n for c in self.children for n in c.fact_names())

    def deciding(self, values: Values, result: bool | None) -> list[Leaf]:
        return _decide(self.children, values, result, short=False)

    def to_data(self) -> Any:
        return {"all": [c.to_data() for c in self.children]}


class AnyOf(Node):
    """``{any: [...]}``: true if any child is true, else undetermined if any is, else false."""

    def __init__(self, children: list[Node]) -> None:
        self.children = children
        fns = tuple(c.fn for c in children)

        def any_(values: Values) -> bool | None:
            und = False
            for f in fns:
                r = f(values)
                if r is True:
                    return True
                if r is None:
                    und = True
            return None if und else False

        self.fn = any_

    def fact_names(self) -> list[str]:
        return _unique(n for c in self.children for n in c.fact_names())

    def deciding(self, values: Values, result: bool | None) -> list[Leaf]:
        return _decide(self.children, values, result, short=True)

    def to_data(self) -> Any:
        return {"any": [c.to_data() for c in self.children]}


class Not(Node):
    """``{not: ...}``: inverts; undetermined stays undetermined."""

    def __init__(self, child: Node) -> None:
        self.child = child
        f = child.fn

        def not_(values: Values) -> bool | None:
            r = f(values)
            return None if r is None else not r

        self.fn = not_

    def fact_names(self) -> list[str]:
        return self.child.fact_names()

    def deciding(self, values: Values, result: bool | None) -> list[Leaf]:
        return self.child.deciding(values, None if result is None else not result)

    def to_data(self) -> Any:
        return {"not": self.child.to_data()}


def _decide(children: list[Node], values: Values, result: bool | None, short: bool
            ) -> list[Leaf]:
    """``short`` is the value that short-circuits (True for any, False for all)."""
    out: list[Leaf] = []
    for c in children:
        r = c.fn(values)
        if result is None:
            if r is None:
                out.extend(c.deciding(values, r))
        elif r is short and result is short:
            return c.deciding(values, r)  # the first short-circuiting child alone decided it
        elif r is result:
            out.extend(c.deciding(values, r))
    return out


def _unique(names: Any) -> list[str]:
    return list(dict.fromkeys(names))


# --- compilation -------------------------------------------------------------------------------

def compile_condition(raw: Any, rep: Reporter, where: tuple[Any, ...] = ("when",)) -> Node:
    """Validate and compile a condition tree; problems go to ``rep`` (never raises for them).

    A defective leaf compiles to a constant-false placeholder so the rest is still checked.
    """
    if not isinstance(raw, Mapping) or not raw:
        rep.error(where, "a condition must be a mapping: {all: [...]}, {any: [...]}, {not: ...} "
                         "or {fact: NAME, op: OP, value: VALUE}")
        return _dead()
    if "fact" in raw or "op" in raw:
        return _compile_leaf(raw, rep, where)
    keys = [k for k in raw if k in ("all", "any", "not")]
    extra = [k for k in raw if k not in ("all", "any", "not")]
    if len(keys) != 1:
        rep.error(where, f"a condition has exactly one of all / any / not (or is a leaf with "
                         f"fact and op); found {sorted(map(str, raw))}")
        return _dead()
    for k in extra:
        rep.warn((*where, k), f"unknown key {k!r} in condition ignored")
    key = keys[0]
    body = raw[key]
    if key == "not":
        if isinstance(body, list):
            rep.error((*where, key), "not takes one condition (a mapping), not a list; "
                                     "wrap several in all / any")
            return _dead()
        return Not(compile_condition(body, rep, (*where, key)))
    if not isinstance(body, list) or not body:
        rep.error((*where, key), f"{key} takes a non-empty list of conditions")
        return _dead()
    children = [compile_condition(c, rep, (*where, key, i)) for i, c in enumerate(body)]
    return All(children) if key == "all" else AnyOf(children)


def _dead() -> Node:
    return All([])  # never used for evaluation: a rule with errors is not loaded


_TYPES: dict[str, str | None] = {}


def lookup_type(name: str) -> str | None:
    """Registered type of ``name`` (None when unregistered), memoized: rules repeat names."""
    try:
        return _TYPES[name]
    except KeyError:
        spec = registry().lookup(name)
        _TYPES[name] = spec.type if spec else None
        return _TYPES[name]


def fact_type(name: Any, rep: Reporter, where: tuple[Any, ...]) -> str | None:
    """Registered type of fact ``name``, or None after reporting an unknown name."""
    if not isinstance(name, str) or not name:
        rep.error(where, f"fact must be a dotted fact name, not {name!r}")
        return None
    ftype = lookup_type(name)
    if ftype is not None:
        return ftype
    spec = registry().lookup(name)
    if spec is None:
        rep.error(where, f"unknown fact {name!r}: not registered in preflight/registry/"
                         f"{_suggest(name)}")
        return None
    return spec.type


def _suggest(name: str) -> str:
    import difflib  # only to suggest a name for a typo

    names = [s.name for s in registry().specs() if not s.is_template]
    close = difflib.get_close_matches(name, names, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


_LEAVES: dict[tuple[Any, ...], Leaf] = {}
"""Compiled leaves by what they say: half the bundled rules' 1,291 leaves repeat another
(``{fact: config.megatron.fp8_format, op: in, value: [e4m3, hybrid]}``), and a Leaf holds no state
of its rule, so a repeat reuses the first (issue 14, item 4: start-up time). Only leaves that
compiled without a problem are kept: a repeat of a faulty one is reported again, at its place."""

_NOT_FROZEN = object()


def _frozen(value: Any) -> Any:
    """A hashable stand-in for a leaf value that tells apart what YAML tells apart (``1``, ``1.0``,
    ``true``, ``"1"``); ``_NOT_FROZEN`` for anything else (mappings, dates): not memoized."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return (value.__class__, value)
    if isinstance(value, list):
        items = tuple(_frozen(v) for v in value)
        return _NOT_FROZEN if _NOT_FROZEN in items else (list, items)
    return _NOT_FROZEN


def _compile_leaf(raw: Mapping[str, Any], rep: Reporter, where: tuple[Any, ...]) -> Node:
    frozen = _frozen(raw.get("value")) if raw.keys() <= _LEAF_KEYS else _NOT_FROZEN
    key = (raw.get("fact"), raw.get("op"), "value" in raw, frozen)
    if frozen is not _NOT_FROZEN:
        try:
            return _LEAVES[key]
        except (KeyError, TypeError):   # TypeError: a fact or op that is not hashable
            pass
    seen = len(rep.problems)
    node = _compile_leaf_anew(raw, rep, where)
    if frozen is not _NOT_FROZEN and isinstance(node, Leaf) and len(rep.problems) == seen:
        try:
            _LEAVES[key] = node
        except TypeError:
            pass
    return node


def _compile_leaf_anew(raw: Mapping[str, Any], rep: Reporter, where: tuple[Any, ...]) -> Node:
    for k in raw:
        if k not in _LEAF_KEYS:
            rep.warn((*where, k), f"unknown key {k!r} in condition ignored")
    op = raw.get("op")
    if op not in OPERATORS:
        rep.error((*where, "op") if "op" in raw else where,
                  f"unknown operator {op!r}; expected one of {', '.join(OPERATORS)}"
                  if op is not None else "condition leaf has no 'op'")
        return _dead()
    ftype = fact_type(raw.get("fact"), rep, (*where, "fact"))
    if ftype is None:
        return _dead()
    fact = raw["fact"]
    if op in ("exists", "missing"):
        if "value" in raw:
            rep.error((*where, "value"), f"{op} takes no value")
            return _dead()
    elif "value" not in raw:
        rep.error(where, f"operator {op} needs a value")
        return _dead()
    value = raw.get("value")
    try:
        test = build_test(op, ftype, value, fact, rep, where)
    except CompileError:
        return _dead()
    return Leaf(fact, op, value, ftype, test)
