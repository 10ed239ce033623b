"""Values that are called: a lambda, ``functools.partial``, one of the file's own functions, and a
parameter through which one of them is passed (issue 22, holdout11 nvfp4-pretrain: ``RECIPE =
lambda: NVFP4BlockScaling()`` passed to ``run(tag, steps, recipe)``, which opens
``te.fp8_autocast(fp8_recipe=recipe())``; FP8D-TE-0019 came out undetermined), for
:mod:`.pysource`.

- ``lambda: X`` (no parameters) is a :class:`LambdaValue`; calling it is ``X`` evaluated where
  the lambda is written. Anywhere else it stays unknown (it is an :class:`.pyvalues.Unresolved`).
  A lambda with parameters is not followed.
- ``functools.partial(f, *a, **kw)(*b, **kw2)`` is the call ``f(*a, *b, **kw, **kw2)``.
- A file's own function reached through another name (a parameter, an alias) is inlined as a
  direct call is (:func:`.pycallers.inline`).
- Calling a parameter: its value is what the calls of its function pass
  (:func:`.pycallers.param_value`). Where those disagree, only values that can be called count
  -- a call passing ``None`` (``run("bf16", steps, None)``, the BF16 reference run that never
  reaches ``recipe()`` behind ``if recipe``) cannot be the one called --, a parameter passed on
  from the caller's own parameter is followed to that one's calls (``evaluate(model, recipe)``
  inside ``run``), and a default argument counts where a call leaves it out. What remains must
  be one value; else Unresolved with the reason (two different callables, one passed from a
  value the text does not give). A recursion passing the parameter on to itself adds nothing.

Bounded by :data:`.pyvalues.MAX_DEPTH` and :data:`.pycallers.MAX_SITES`, each (function,
parameter) worked out once per lookup and each value kept once; nothing is run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from preflight.reading import pyhydra, pyprops
from preflight.reading.pycallers import MAX_SITES, inline, reached
from preflight.reading.pypartial import site_node
from preflight.reading.pyvalues import MAX_DEPTH, Call, Ref, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

NOTHING = object()
"""What :func:`call` gives when the call is no call of a value it follows."""
PARTIAL = frozenset({"functools.partial"})
_NOT_CALLABLE = (type(None), bool, int, float, str, list, dict)


@dataclass(frozen=True)
class LambdaValue(Unresolved):
    """``lambda: body`` written in ``scope``: unknown as a value, its body when called."""

    node: ast.Lambda | None = field(default=None, compare=False)
    scope: Any = field(default=None, compare=False, repr=False)
    at: int = 0
    """``id`` of the lambda's node: two values are the same lambda when it is the same one."""


def other(node: ast.expr, scope: Scope, line: int | None) -> Unresolved:
    """An expression :mod:`.pysource` does not evaluate: a lambda is kept to be called."""
    if isinstance(node, ast.Lambda):
        return LambdaValue(f"a lambda (line {node.lineno})", line, node, scope, id(node))
    return Unresolved("computed when the script runs", line)


def call(module: Module, node: ast.Call, scope: Scope, depth: int, func: Any) -> Any:
    """The value of ``node`` whose callee evaluated to ``func``; :data:`NOTHING` when it is no
    call this module follows (the caller makes a plain :class:`.pyvalues.Call`)."""
    if depth > MAX_DEPTH:
        return NOTHING
    if isinstance(func, pyprops.BoundMethod) and depth > 0:    # obj.method(...) in a value
        got = pyprops.call_method(module, node, scope, depth, func)
        return NOTHING if got is pyprops.NOT_SET else got
    if isinstance(func, Ref) and func.name in pyhydra.UTILS:    # hydra.utils.get_class("x.Y")
        return pyhydra.util(module, node, scope, depth, func.name)
    if isinstance(func, pyhydra.Get):                           # cfg.get("fp8", False)
        return pyhydra.get(module, node, scope, depth, func)
    if isinstance(func, Unresolved) and not isinstance(func, LambdaValue) and \
            isinstance(node.func, ast.Name):
        narrowed = _called_parameter(module, scope, node.func.id, depth)
        if narrowed is NOTHING:
            return NOTHING
        if isinstance(narrowed, Unresolved) and not isinstance(narrowed, LambdaValue):
            return narrowed
        func = narrowed
        if isinstance(func, Ref) and not _own(module, func):
            return _plain(module, node, scope, depth, func.name)
    if isinstance(func, LambdaValue) and func.node is not None:
        lam = func.node
        if lam.args.args or lam.args.posonlyargs or lam.args.vararg or lam.args.kwonlyargs or \
                lam.args.kwarg:
            return Unresolved(f"a lambda with parameters (line {lam.lineno}) is called",
                              node.lineno)
        return module.evaluate(lam.body, func.scope, depth + 1)
    if isinstance(func, Call) and func.func in PARTIAL and func.args and \
            isinstance(func.args[0], Ref):
        made = _plain(module, node, scope, depth, func.args[0].name)
        return Call(made.func, node.lineno, (*func.args[1:], *made.args),
                    {**func.kwargs, **made.kwargs}, {**func.lines, **made.lines},
                    func.star or made.star)
    if isinstance(func, Ref) and _own(module, func) and not (
            isinstance(node.func, ast.Name) and node.func.id == func.last):
        got = inline(module, node, scope, depth, func.last)
        return NOTHING if got is None else got
    return NOTHING


def _own(module: Module, ref: Ref) -> bool:
    return ref.name.startswith("__main__.") and ref.last in module.functions


def _plain(module: Module, node: ast.Call, scope: Scope, depth: int, name: str) -> Call:
    """``name(...)`` with the arguments ``node`` passes (``**mapping``: any keyword)."""
    kwargs = {kw.arg: module.evaluate(kw.value, scope, depth + 1)
              for kw in node.keywords[:64] if kw.arg is not None}
    lines = {kw.arg: kw.value.lineno for kw in node.keywords[:64] if kw.arg is not None}
    star = Unresolved("keywords passed as **mapping", node.lineno) if any(
        kw.arg is None for kw in node.keywords) else None
    return Call(name, node.lineno, tuple(module.evaluate(a, scope, depth + 1)
                                         for a in node.args[:64]), kwargs, lines, star)


def _called_parameter(module: Module, scope: Scope, name: str, depth: int) -> Any:
    """The one callable value the calls of the function pass for its parameter ``name``
    (module docstring); NOTHING when ``name`` is no parameter here or no call is seen."""
    owner = _param_scope(scope, name)
    if owner is None:
        return NOTHING
    found = _candidates(module, owner, name, depth, set(), {})
    if found is None:
        return NOTHING
    if isinstance(found, Unresolved):
        return found
    kept = [v for v in found if not isinstance(v, _NOT_CALLABLE)]
    if not kept:
        return NOTHING
    first = kept[0]
    if isinstance(first, Unresolved) and not isinstance(first, LambdaValue):
        return first
    if all(_alike(first, v) for v in kept[1:]):
        return first
    return Unresolved(f"{name} is called, and the calls of {owner.name}() pass different "
                      f"callables for it ({len(kept)} calls)")


def _param_scope(scope: Scope, name: str) -> Scope | None:
    """The scope whose parameter ``name`` is seen from ``scope`` (not one rebinding it)."""
    where: Scope | None = scope
    for _ in range(MAX_DEPTH):
        if where is None or name in where.binds:
            return None
        if name in where.params:
            return where
        where = where.parent
    return None


def _candidates(module: Module, scope: Scope, name: str, depth: int,
                seen: set[tuple[int, str]], memo: dict[tuple[int, str], Any],
                ) -> list[Any] | Unresolved | None:
    """What each call of ``scope``'s function passes for ``name``, a caller's own parameter
    passed on expanded into its calls'; None when no call is seen (or it is no plain function).
    Each (function, parameter) is worked out once per lookup (``memo``): calls that pass a
    parameter on, many to a function, would otherwise cost MAX_SITES ** depth."""
    key = (id(scope), name)
    if key not in memo:
        memo[key] = _sites_of(module, scope, name, depth, seen, memo)
    got: list[Any] | Unresolved | None = memo[key]
    return got


def _sites_of(module: Module, scope: Scope, name: str, depth: int,
              seen: set[tuple[int, str]], memo: dict[tuple[int, str], Any],
              ) -> list[Any] | Unresolved | None:
    owner = module.owners.get(id(scope))
    if owner is None or owner[0] is not None or depth > MAX_DEPTH:
        return None
    func = owner[1]
    if (id(scope), name) in seen:
        return []       # passed on to itself (a recursion): the values come from other calls
    seen = seen | {(id(scope), name)}
    if func in module._escapes or func in module.bindings or name not in scope.params:
        return None
    index = scope.params.index(name)
    out: list[Any] = []
    if len(module._sites.get(func, [])) > MAX_SITES:     # the rest may pass anything
        return Unresolved(f"{func}() is called more than {MAX_SITES} times")
    for node in module._sites.get(func, [])[:MAX_SITES]:
        caller = module.call_scope.get(id(site_node(node)))
        if caller is None or (caller is not module.module and
                              (func in caller.binds or func in caller.params)):
            continue
        guards = caller.call_guards.get(id(site_node(node)))
        if (module.bindings and not reached(module, caller, depth)) or \
                (guards and module.runs(guards, caller, depth=depth + 1) is False):
            continue
        if any(isinstance(a, ast.Starred) for a in node.args[:index + 1]) or \
                any(kw.arg is None for kw in node.keywords):
            return Unresolved(f"{func}() is called with *args / **kwargs at line {node.lineno}")
        given = node.args[index] if index < len(node.args) else next(
            (kw.value for kw in node.keywords if kw.arg == name), None)
        if given is None and site_node(node) is not node:
            return Unresolved(f"{name} of {func}() is given where the partial of line "
                              f"{node.lineno} is called")
        if given is None:
            if name not in scope.defaults:
                continue            # a call that would fail: it calls nothing
            _add(out, module.evaluate(scope.defaults[name], module.module, depth + 1))
            continue
        on = given.id if isinstance(given, ast.Name) else None
        passed = _param_scope(caller, on) if on is not None else None
        if on is not None and passed is not None:
            more = _candidates(module, passed, on, depth + 1, seen, memo)
            if more is None or isinstance(more, Unresolved):
                return more if more is not None else Unresolved(
                    f"{on} of {passed.name}() is passed to {func}() at line "
                    f"{node.lineno}, and no call of {passed.name}() is seen")
            for value in more:
                _add(out, value)
        else:
            _add(out, module.evaluate(given, caller, depth + 1))
    return out or None


def _add(out: list[Any], value: Any) -> None:
    """``value`` once (a value passed on by many calls is one candidate, not one per path)."""
    if not any(_alike(value, v) for v in out):
        out.append(value)


def _alike(a: Any, b: Any) -> bool:
    if isinstance(a, LambdaValue) or isinstance(b, LambdaValue):
        return isinstance(a, LambdaValue) and isinstance(b, LambdaValue) and a.at == b.at
    if isinstance(a, Call) and isinstance(b, Call):
        return a.func == b.func and a.args == b.args and a.kwargs == b.kwargs
    return type(a) is type(b) and bool(a == b)
