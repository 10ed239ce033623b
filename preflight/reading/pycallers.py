"""Values that reach a function through its calls (issue 22 item 1: values carried between
functions and between the Python files of one job), for :mod:`.pysource`.

A training script keeps its settings in an object it hands to helpers (``hp.mixed_precision =
"mxfp8"; run_te_mixtral_finetune(hp)`` in the TE Mixtral tutorial), and those helpers build the
recipe (``if hyperparams.mixed_precision == "mxfp8": fp8_recipe = MXFP8BlockScaling()``) and pass
it on to a model class (``self._fp8_recipe = fp8_recipe``, used by ``te.autocast(recipe=
self._fp8_recipe)``). Read without running anything:

- a parameter of one of the file's functions is the value every call of that function passes
  (its calls in this file, and those another file of the job makes, :attr:`Module.bindings`),
  when they all pass the same one; a parameter of ``__init__`` likewise from the calls of its
  class. A function the file also uses as a value (passed as a callback, stored) may be called
  from elsewhere with anything: its parameters stay unknown, and so do those of a function no
  call is seen for;
- ``self.x`` in a method of a class is what ``__init__`` sets ``self.x`` to, when no other
  method sets it.

Anything else stays :class:`.pyvalues.Unresolved` with the reason. Each lookup is bounded by
:data:`.pyvalues.MAX_DEPTH` (and worked out once per scope, name and depth by the caller).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from preflight.reading import pyclick, pyfire, pyhydra, pyjsonarg, pyprops
from preflight.reading.pyoption import option_value
from preflight.reading.pypartial import bound_call, partial_names, site_node
from preflight.reading.pyreach import (  # noqa: F401 - re-exported
    MAX_SITES,
    never_called,
    reached,
    scope_of,
)
from preflight.reading.pysig import bound_values, misfit
from preflight.reading.pyvalues import MAX_DEPTH, Call, Ref, Unresolved, dotted

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

MAX_INLINE = 6
"""Calls to the file's own functions followed, one inside another."""
MAX_INLINED = 20_000
"""Calls of the file's own functions followed in one file, in all: each return may call several
(redteam10: 300 functions each returning ``f(x) + g(x) + h(x)`` were 3**6 inlines per call, a
40 KB file read for minutes); past it a call is left as a call, as past :data:`MAX_INLINE`."""
_CHECKS = frozenset({"isinstance", "issubclass", "type", "super"})


def call_sites(tree: ast.Module) -> tuple[dict[str, list[ast.Call]], set[str]]:
    """Each name called as ``name(...)`` with those calls, and the names also used as a value
    (``callback=f``, ``fns = [f]``), whose calls the text does not all show."""
    sites: dict[str, list[ast.Call]] = {}
    callee: set[int] = set()
    quiet: set[int] = set()
    partials = partial_names(tree)
    for node in ast.walk(tree):
        bound = bound_call(node, partials)
        if bound is not None:       # `partial(f, a, k=v)`: a call of f binding a and k
            sites.setdefault(bound.func.id, []).append(bound)       # type: ignore[attr-defined]
            callee.add(id(site_node(bound).args[0]))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            sites.setdefault(node.func.id, []).append(node)
            callee.add(id(node.func))
            if node.func.id in _CHECKS:
                quiet.update(id(a) for a in node.args)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            quiet.add(id(node.value))       # Class.attr, Class.method(...): no call of it
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.arg)):
            for note in (getattr(node, "returns", None), getattr(node, "annotation", None)):
                if note is not None:
                    quiet.update(id(n) for n in ast.walk(note))
        elif isinstance(node, ast.AnnAssign):
            quiet.update(id(n) for n in ast.walk(node.annotation))
    escapes = {node.id for node in ast.walk(tree)
               if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and
               id(node) not in callee and id(node) not in quiet}
    return sites, escapes


def parameter(module: Module, scope: Scope, name: str, depth: int, line: int | None) -> Any:
    """A parameter's value: an inlined call's, a click option's from the launch line
    (:mod:`.pyclick`), what every call of the function passes (:func:`param_value`, worked
    out once per scope, name and depth), else Unresolved."""
    if name in scope.values:
        return scope.values[name]
    if scope.node is not None:
        if id(scope.node) not in module._clicks:
            module._clicks[id(scope.node)] = pyclick.options(module, scope)
        opt = module._clicks[id(scope.node)].get(name)
        if opt is not None:
            return option_value(opt, name, module.argv, module.path, label=name)
        if scope.params and name == scope.params[0]:    # `@hydra.main(...) def main(cfg)`
            got = pyhydra.received(module, scope)
            if got is not pyhydra.NOT_HYDRA:
                return got
        got = pyjsonarg.received(module, scope, name, depth)   # `CLI(fn)`: the launch line's
        if got is not pyjsonarg.NOT_CLI:
            return got
        got = pyfire.received(module, scope, name, depth)   # `fire.Fire(fn)`: likewise
        if got is not pyfire.NOT_FIRE:
            return got
    key = (id(scope), name, depth)
    if key not in module._params:
        module._params[key] = Unresolved(f"{name} depends on itself")
        module._params[key] = param_value(module, scope, name, depth)
    got = module._params[key]
    return got if got is not NO_CALL else \
        Unresolved(f"{name} is a parameter of {scope.name}()", line)


NO_CALL = object()
"""What :func:`param_value` gives when the text shows no call (None is a value a call passes)."""


def param_value(module: Module, scope: Scope, name: str, depth: int) -> Any:
    """``name`` (a parameter of ``scope``) as every call of its function passes it;
    :data:`NO_CALL` when the text shows no such call (the caller keeps "a parameter of f()")."""
    owner = module.owners.get(id(scope))
    if owner is None or depth > MAX_DEPTH:
        return NO_CALL
    cls, func = owner
    params = scope.params
    if cls is not None:
        if func != "__init__" or not params or name == params[0]:
            return NO_CALL      # a method's calls go through instances: not followed
        params = params[1:]
    target = cls or func
    if (target in module._escapes and target not in module.bindings) or name not in params:
        return NO_CALL      # (`typer.run(main)` passes main as a value; the job's calls bind it)
    index = params.index(name)
    bound = [_passed(module, scope, call, index, name)
             for call in list(module.bindings.get(target, ()))]
    if not _alike(module, target, index, name) or \
            any(not _same(bound[0], v) for v in bound[MAX_SITES:]):
        return Unresolved(f"{target}() is called more than {MAX_SITES} times with different "
                          f"text for {name}")     # the first 32 agreeing say nothing of a 33rd
    values: list[Any] = bound[:MAX_SITES]
    for node in module._sites.get(target, [])[:MAX_SITES]:
        got = _site(module, node, target, index, name, scope, depth)
        if got is not _SKIP:
            values.append(got)
    if not values:
        return NO_CALL
    bad = next((v for v in values if isinstance(v, Unresolved)), None)
    if bad is not None:
        return Unresolved(f"{name} of {target}() is not known at every call ({bad.reason})",
                          bad.line)
    if all(_same(values[0], v) for v in values[1:]):
        return values[0]
    return Unresolved(f"{target}() is called with different values for {name} "
                      f"({len(values)} calls)")


_SKIP = object()


def _passed(module: Module, scope: Scope, call: Call, index: int, name: str) -> Any:
    """What a call another file of the job makes passes for ``name``."""
    if index < len(call.args):
        return call.args[index]
    if name in call.kwargs:
        return call.kwargs[name]
    return call.star if call.star is not None else _default(module, scope, name)


def _alike(module: Module, target: str, index: int, name: str) -> bool:
    """Whether every call of ``target`` past the first :data:`MAX_SITES` passes ``name`` as
    the same text, in the same scope, as one of those read."""
    sites = module._sites.get(target, [])
    if len(sites) <= MAX_SITES:
        return True
    seen = {_given(module, node, index, name) for node in sites[:MAX_SITES]}
    return all(_given(module, node, index, name) in seen for node in sites[MAX_SITES:])


def _given(module: Module, node: ast.Call, index: int, name: str) -> tuple[int, str]:
    arg = node.args[index] if index < len(node.args) else next(
        (k.value for k in node.keywords if k.arg == name or k.arg is None), None)
    return id(scope_of(module, node)), ast.dump(arg) if arg is not None else ""


def _site(module: Module, node: ast.Call, target: str, index: int, name: str, scope: Scope,
          depth: int) -> Any:
    """What the call ``node`` passes for ``name``, _SKIP when it is no call of the file's
    ``target`` or in a branch that does not run."""
    caller = scope_of(module, node)
    if caller is None or (caller is not module.module and
                          (target in caller.binds or target in caller.params)):
        return _SKIP            # another `target` (a local name) is called there
    if module.bindings and not reached(module, caller, depth):
        return _SKIP            # in a function of this module the job never calls
    guards = caller.call_guards.get(id(site_node(node)))
    if guards and module.runs(guards, caller, depth=depth + 1) is False:
        return _SKIP
    if any(isinstance(a, ast.Starred) for a in node.args[:index + 1]):
        return Unresolved(f"{target}() is called with *args at line {node.lineno}",
                          node.lineno)
    why = misfit(scope.node, node, 1 if module.owners.get(id(scope), (None,))[0] else 0) \
        if site_node(node) is node else None
    if why is not None:     # Python raises TypeError: the body never runs with these values
        return Unresolved(f"{target}() at line {node.lineno} raises TypeError ({why})",
                          node.lineno)
    if site_node(node) is not node and index >= len(node.args) and \
            all(kw.arg != name for kw in node.keywords):
        return Unresolved(f"{name} of {target}() is given where the partial of line "
                          f"{node.lineno} is called", node.lineno)
    if index < len(node.args):
        return module.evaluate(node.args[index], caller, depth + 1)
    for kw in node.keywords:
        if kw.arg == name:
            return module.evaluate(kw.value, caller, depth + 1)
        if kw.arg is None:      # `T(**kwargs)`: the mapping's key, when the text gives it
            mapping = module.evaluate(kw.value, caller, depth + 1)
            if not isinstance(mapping, dict):
                return Unresolved(f"{target}() is called with **{dotted(kw.value) or '...'} "
                                  f"at line {node.lineno}" + (
                                      f" ({mapping.reason})" if isinstance(mapping, Unresolved)
                                      else ""), node.lineno)
            if name in mapping:
                return mapping[name]
    return _default(module, scope, name)


def _default(module: Module, scope: Scope, name: str) -> Any:
    if name in scope.defaults:
        return module.evaluate(scope.defaults[name], module.module, 1)
    return Unresolved(f"{name} is not passed (the call would fail)")


def _same(a: Any, b: Any) -> bool:
    """Equal values, two calls alike wherever they are written."""
    if isinstance(a, Call) and isinstance(b, Call):
        return a.func == b.func and len(a.args) == len(b.args) and \
            all(_same(x, y) for x, y in zip(a.args, b.args)) and \
            a.kwargs.keys() == b.kwargs.keys() and \
            all(_same(a.kwargs[k], b.kwargs[k]) for k in a.kwargs) and a.when == b.when
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (Unresolved, Ref)) or isinstance(b, (Unresolved, Ref)):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def instance_attr(module: Module, cls: str, attr: str, depth: int) -> Any:
    """``self.<attr>`` in a method of ``cls``: what its ``__init__`` sets, when no other method
    of the class sets it (a dataclass: :func:`.pyprops.field_value`); :data:`.pyprops.NOT_SET`
    when the text shows no set that runs (the caller goes on as before): redteam8, None was
    also what ``self.x = None`` gave."""
    init = module.methods.get((cls, "__init__"))
    made = init is None and pyprops.init_scope(module, cls) is not None     # a dataclass
    if (init is None and not made) or (init is not None and not init.params) or \
            depth > MAX_DEPTH:
        return pyprops.NOT_SET
    for (owner, method), scope in module.methods.items():
        if owner == cls and method not in ("__init__", "__post_init__" if made else "") and \
                scope.params and \
                any(path[:1] == (attr,) for path, *_ in scope.sets.get(scope.params[0], ())):
            return Unresolved(f"self.{attr} is set again in {cls}.{method}()")
    if init is None:
        return pyprops.field_value(module, cls, attr, depth)
    sets = [(path, value, line, guards) for path, value, line, guards
            in init.sets.get(init.params[0], ()) if path[:1] == (attr,)]
    busy = module.__dict__.setdefault("_dc_busy", {})
    if (cls, attr) in busy:     # `self.x = f(self.x)`: the value set before
        return busy[(cls, attr)]
    return pyprops.apply_sets(module, init, (cls, attr), sets, pyprops.NOT_SET, depth)


def inline(module: Module, node: ast.Call, scope: Scope, depth: int,
           name: str | None = None) -> Any:
    """The result of calling one of the file's own functions (its single return), its
    parameters bound to the call's arguments or their defaults; ``name``: the function's,
    where ``node`` calls it through another name (:mod:`.pycallables`)."""
    assert name is not None or isinstance(node.func, ast.Name)
    fn, inner = module.functions[name or node.func.id]     # type: ignore[attr-defined]
    spent = module.__dict__.get("_inlined", 0)
    if not inner.returns or module._inlining >= MAX_INLINE or spent >= MAX_INLINED:
        return None
    module.__dict__["_inlined"] = spent + 1
    module._inlining += 1
    try:
        bound = replace(inner, values=bound_values(module, inner, node, scope, depth))
        result = module.result(bound, depth)
        return None if isinstance(result, Ref) else result
    finally:
        module._inlining -= 1


def apply_sets(module: Module, call: Call, scope: Scope, name: str | None, depth: int,
               before: int | None = None, prefix: tuple[str, ...] = ()) -> Call:
    """``name.a.b = value`` statements of ``scope`` applied to ``call``; ``before``: only
    those written before that line (or in a loop); ``prefix``: only ``name.<prefix>.a = v``,
    as ``a = v`` (``m.obj.a = v`` on the ``m.obj`` of a job module, :mod:`.pyshared`)."""
    if name is None:
        return call
    sets = [s for s in scope.sets.get(name, ()) if s[0][:len(prefix)] == prefix and (
        before is None or s[2] < before or any(g.loop for g in s[3]))]
    # each object with the same sets applied once (a script passing it on 2,000 lines)
    memo = module.__dict__.setdefault("_applied", {})
    key = (id(call), id(scope), name, prefix, len(sets), depth)
    if key not in memo:
        memo[key] = (call, _apply_sets(module, call, scope, name, depth, sets, prefix))
    return memo[key][1]     # type: ignore[no-any-return]


def _apply_sets(module: Module, call: Call, scope: Scope, name: str, depth: int,
                sets: list[Any], prefix: tuple[str, ...]) -> Call:
    kwargs, lines = dict(call.kwargs), dict(call.lines)
    for path, value, line, guards in sets:
        path = path[len(prefix):]
        state = module.runs(guards, scope, depth=depth) if guards else True
        if not path or state is False:
            continue
        got = module.evaluate(value, scope, depth + 1) if state is True else Unresolved(
            f"{name}.{'.'.join((*prefix, *path))} is {state.reason}", line)
        if len(path) > 1:       # (one copy of the mapping per call, not per set: redteam)
            inner = kwargs.get(path[0])
            got = (inner if isinstance(inner, Call) else Call("", line)).with_set(
                path[1:], got, line)
        kwargs[path[0]], lines[path[0]] = got, line
    return replace(call, kwargs=kwargs, lines=lines) if sets else call
