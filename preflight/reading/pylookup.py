"""The value a name has where a Python job file uses it, for :mod:`.pysource`: the function's
own bindings, then those of the functions it is defined in, then the module's (the binding a use
sees: the last one before it that runs, :func:`reaching`), a parameter as its calls pass it
(:mod:`.pycallers`), an import (:mod:`.pyshared`), a builtin; else Unresolved with the reason.
Each (scope, name, line, depth) is worked out once (:func:`bound`); split from pysource.py.

Bindings under conditions the text does not decide (``if c: from a import M`` / ``else: from b
import M``, ``if c: x = 1`` / ``else: x = 1``) are merged (:func:`merged`): the value every
branch gives when they agree (Python binds one of them), else Unresolved with the conditions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from preflight.reading import pybuiltins, pyshared
from preflight.reading.pycallers import _same, apply_sets, parameter
from preflight.reading.pyscopes import Bind
from preflight.reading.pyvalues import BUILTINS, MAX_DEPTH, Call, Ref, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module


def name_value(module: Module, name: str, scope: Scope, depth: int, line: int | None) -> Any:
    """The value of ``name`` used at ``line`` of ``scope``."""
    # the function's own names, then those of the functions it is defined in (a closure:
    # their values once they have run), then the module's
    chain, outer = [scope], scope.parent
    while outer is not None and len(chain) < MAX_DEPTH:
        chain.append(outer)
        outer = outer.parent
    if scope is not module.module:
        chain.append(module.module)
    if (id(scope), name) in module.looped_names:   # a comprehension's variable: pybuiltins
        return module.looped_names[(id(scope), name)]
    for where in chain:
        at = line if where is scope else None
        if where is module.module and where is not scope and name in module.shared:
            return module.shared[name]
        binds = where.binds.get(name)
        if binds:
            return bound(module, name, binds, where, at, depth)
        if where.takes(name) or (where is scope and name in scope.values):
            return parameter(module, where, name, depth, at)
    if name in module.imports:
        return pyshared.imported(module, name, scope, line, depth)
    if name in BUILTINS:
        return Ref(f"builtins.{name}")
    if name in module.functions or name in module.classes:
        return Ref(f"__main__.{name}")
    return Unresolved(f"{name} is not defined in this file", line)


def bound(module: Module, name: str, binds: list[Bind], scope: Scope, line: int | None,
          depth: int) -> Any:
    """The value of ``name`` at ``line``; each (scope, name, line, depth) is worked out once
    (a chain of names that use each other twice would otherwise cost 2**depth; the depth is
    in the key because a value cut short by :data:`MAX_DEPTH` must not be reused nearer
    the top)."""
    key = (id(scope), name, line, depth)
    if key in module._memo:
        return module._memo[key][1]
    module._memo[key] = (scope, Unresolved(f"{name} depends on itself", line))
    bind = reaching(module, name, binds, scope, line, depth)
    value: Any
    if bind is None and scope.takes(name):
        value = parameter(module, scope, name, depth, line)   # no rebinding of it runs
    elif isinstance(bind, Unresolved):      # one of several branches' bindings, or not bound
        value = merged(module, name, binds, scope, line, depth)
        value = bind if value is NOT_MERGED else value
    elif bind is None:
        value = Unresolved(f"{name} is set only in branches that do not run", line)
    elif bind.ref is not None:   # an import in a function, or one pynames.link ordered
        value = module.ref(bind.ref)
    elif bind.value is None:
        value = pybuiltins.grown(module, name, binds, scope, bind, depth) \
            if bind.aug is not None else Unresolved(bind.why, line)
    else:
        value = module.evaluate(bind.value, scope, depth + 1)
    if isinstance(value, Call):
        value = module._weights.bounded(apply_sets(module, value, scope, name, depth, line), line)
    module._memo[key] = (scope, value)
    return value


def reaching(module: Module, name: str, binds: list[Bind], scope: Scope,
             line: int | None, depth: int) -> Bind | Unresolved | None:
    """The binding of ``name`` a use at ``line`` sees: the last one before it that runs
    (in order; one inside a loop may come from a later line), Unresolved when a binding
    under a condition the text does not decide may replace it, None when none runs.
    ``line`` None (a use from another scope): the value once the scope has run."""
    before = [b for b in binds if line is None or b.line < line or
              any(g.loop for g in b.guards)]
    got: Bind | Unresolved | None = None
    # a parameter rebound later (`if x == "a": x = A()`) is the parameter before that
    for bind in before if scope.takes(name) else before or binds:
        state = module.runs(bind.guards, scope, depth=depth) if bind.guards else True
        if state is True:
            got = bind
        elif isinstance(state, Unresolved):
            got = Unresolved(f"{name} is {state.reason}" + (
                f"; otherwise it keeps the value set at line {got.line}"
                if isinstance(got, Bind) else ""), bind.line)
    return got


MAX_BRANCHES = 8
"""Bindings of one name under conditions the text does not decide that are merged; more stay
Unresolved."""
NOT_MERGED = object()
"""What :func:`merged` gives when the branches do not give one value."""


def merged(module: Module, name: str, binds: list[Bind], scope: Scope, line: int | None,
           depth: int) -> Any:
    """``name`` at ``line`` where the bindings that may reach it run under conditions the text
    does not decide: the value they all give when they agree (evaluated each where written),
    :data:`NOT_MERGED` otherwise. With no binding that surely runs before them, two of them must
    be the two sides of one ``if`` (else the name may keep a value from elsewhere)."""
    before = [b for b in binds if line is None or b.line < line or
              any(g.loop for g in b.guards)]
    branches: list[Bind] = []
    based = False
    for bind in before if scope.takes(name) else before or binds:
        state = module.runs(bind.guards, scope, depth=depth) if bind.guards else True
        if state is True:
            branches, based = [bind], True
        elif isinstance(state, Unresolved):
            branches.append(bind)
        if len(branches) > MAX_BRANCHES:
            return NOT_MERGED
    if len(branches) < 2 or not (based or _sides(branches)) or (
            not based and scope.takes(name)):
        return NOT_MERGED
    values: list[Any] = []
    for bind in branches:
        if bind.ref is not None:
            got = module.ref(bind.ref)
        elif bind.value is not None:
            got = module.evaluate(bind.value, scope, depth + 1)
        else:
            return NOT_MERGED       # unpacked, changed in place, set in a loop: no one value
        if isinstance(got, Unresolved) or not _same(got, values[0] if values else got):
            return NOT_MERGED
        values.append(got)
    return values[0]


def _sides(branches: list[Bind]) -> bool:
    """Whether two of ``branches`` are bound on the two sides of one ``if`` (the same test)."""
    seen: dict[tuple[int, int], set[bool]] = {}
    for bind in branches:
        for guard in bind.guards:
            if guard.test is not None:
                sides = seen.setdefault((guard.line, id(guard.test)), set())
                sides.add(guard.holds)
                if len(sides) == 2:
                    return True
    return False
