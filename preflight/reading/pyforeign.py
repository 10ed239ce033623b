"""Values that cross a function's edge at one call site, for :mod:`.pysource` (holdout12,
bionemo-recipes' ESM-2 recipe at 3a9d005b: train_fsdp2.py:77 ``layer_precision =
resolve_layer_precision(num_layers=..., fp8_enabled=args.fp8_config.enabled, ...)`` calls a
helper of quantization.py; modeling_esm_te.py:260/265 ``with self.get_autocast_context(None,
outer=True)`` / ``(layer_idx)`` pick which ``te.autocast`` the method returns by its parameters).

- :func:`foreign`: a call, in a value, of a function another file of the job defines at its top
  (``from quantization import resolve_layer_precision``) is that function's return that runs,
  its parameters bound to this call's arguments (or their defaults), worked out in that file
  (read as :mod:`preflight.jobs.pynames` reads it, never imported). Not followed -- the call
  stays a call record, as before -- where the function takes ``*args`` / ``**kwargs``, the call
  passes ``*`` / ``**`` or an argument it does not take, a parameter is not given, the file
  defines the name more than once or rebinds it, the importer changes that module's objects
  (:mod:`.pyshared`: the module's own values would be the wrong ones), the function is being
  followed already (a cycle through the job's imports), past :data:`.pycallers.MAX_INLINE`
  nested ones, or where its return is not known. A call made for its own sake (not in a
  value) stays a record, so :mod:`preflight.jobs.pyimports` still reads the helper's calls.
- :func:`sites`: a method of a class of the file whose only calls the file shows are
  ``self.m(...)`` in the methods of that class (``m`` used nowhere else, not even as a value)
  has its calls read once per such call, its parameters that call's arguments (or their
  defaults), ``self`` the same object; a call under a condition the text does not decide makes
  the method's calls Unknown with it, one in a branch that does not run adds nothing. At most
  :data:`.pycallers.MAX_SITES` calls, :data:`MAX_WORK` (call sites x the method's calls) per
  method and :data:`MAX_FILE_WORK` per file: past them a method is read once, as before, its
  parameters unknown.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from preflight.reading.pycallers import MAX_INLINE, MAX_SITES
from preflight.reading.pyvalues import Call, Ref, Unresolved

if TYPE_CHECKING:
    from collections.abc import Iterator

    from preflight.reading.pyguards import Guards
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

NOTHING = object()
MAX_WORK = 2_000
"""A method's calls times its call sites, read per site; :data:`MAX_FILE_WORK` for all the
methods of one file (the most of a benchmark job, modded-nanogpt's train_gpt.py: 163 in all;
150 methods called 30 times each took the file past ``pyvalues.MAX_STEPS``)."""
MAX_FILE_WORK = 5_000


def bind(inner: Scope, node: ast.Call, value: Any, defaults: Any, skip: int = 0,
         ) -> dict[str, Any] | None:
    """``inner``'s parameters (past the first ``skip``) as ``node`` passes them (``value``
    evaluates one argument where the call is written, ``defaults`` one default), or None when
    the call is not one this module follows (module docstring)."""
    fn = inner.node
    if fn is None or fn.args.vararg is not None or fn.args.kwarg is not None or \
            any(isinstance(a, ast.Starred) for a in node.args) or \
            any(k.arg is None or k.arg not in inner.params[skip:] for k in node.keywords):
        return None
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)][skip:]
    if len(node.args) > len(positional):
        return None
    values = {p: defaults(d) for p, d in inner.defaults.items() if p in inner.params[skip:]}
    values.update(zip(positional, (value(a) for a in node.args)))
    values.update((k.arg, value(k.value)) for k in node.keywords if k.arg is not None)
    return values if all(p in values for p in inner.params[skip:]) else None


def foreign(module: Module, node: ast.Call, scope: Scope, depth: int, func: Any) -> Any:
    """The value of ``node``, a call of another job file's function (module docstring);
    :data:`NOTHING` when it is not followed."""
    if depth == 0 or not isinstance(func, Ref) or module.foreign is None:
        return NOTHING
    found = module.foreign(func.name)
    if found is None:
        return NOTHING
    helper, inner, busy, locate = found
    key = (helper.path, inner.name)
    if key in busy or not inner.returns or helper._inlining >= MAX_INLINE:
        return NOTHING
    values = bind(inner, node, lambda a: module.evaluate(a, scope, depth + 1),
                  lambda d: helper.evaluate(d, helper.module, depth + 1))
    if values is None:
        return NOTHING
    bound = replace(inner, values=values)
    helper.__dict__.setdefault("_kept", []).append(bound)   # its id stays its own
    busy.add(key)
    helper._inlining += 1
    try:
        got = helper.result(bound, depth + 1)
    finally:
        helper._inlining -= 1
        busy.discard(key)
    return NOTHING if isinstance(got, (Ref, Unresolved)) else locate(got)


def sites(module: Module, scope: Scope) -> list[tuple[Scope, Unresolved | None]] | None:
    """Each call of the method ``scope`` (module docstring) as a scope with its parameters
    bound, with the condition it is made under (None: it runs); None when the method is not
    read per call."""
    owner = module.owners.get(id(scope))
    cls, name = owner if owner is not None else (None, "")
    if cls is None or name.startswith("__") or len(scope.params) < 2 or scope.node is None:
        return None
    memo = module.__dict__.setdefault("_per_site", {})
    if id(scope) not in memo:
        memo[id(scope)] = (scope, _sites(module, scope, cls, name))
    return memo[id(scope)][1]   # type: ignore[no-any-return]


def _sites(module: Module, scope: Scope, cls: str, name: str,
           ) -> list[tuple[Scope, Unresolved | None]] | None:
    found = list(self_calls(module, cls, name))
    work = len(found) * max(1, len(scope.calls))
    spent = module.__dict__.get("_site_work", 0)
    if not found or attr_uses(module).get(name, 0) != len(found) or len(found) > MAX_SITES or \
            work > MAX_WORK or spent + work > MAX_FILE_WORK:
        return None         # called (or taken) elsewhere too: not every call is seen
    module.__dict__["_site_work"] = spent + work
    out: list[tuple[Scope, Unresolved | None]] = []
    for node, caller, guards in found:
        state = module.runs(guards, caller, calls=True) if guards else True
        if state is False:
            continue        # in a branch that does not run
        values = bind(scope, node, lambda a, c=caller: module.evaluate(a, c, 1),
                      lambda d: module.evaluate(d, module.module, 1), skip=1)
        if values is None:
            return None
        bound = replace(scope, values=values)
        module.owners[id(bound)] = module.owners[id(scope)]     # `self.x` as in the method
        module.__dict__.setdefault("_kept", []).append(bound)
        out.append((bound, state if isinstance(state, Unresolved) else None))
    return out


def attr_uses(module: Module) -> dict[str, int]:
    """How many times each attribute name is written in the file (``x.name``), counted once."""
    if "_attr_uses" not in module.__dict__:
        uses: dict[str, int] = {}
        for n in ast.walk(module.tree):
            if isinstance(n, ast.Attribute):
                uses[n.attr] = uses.get(n.attr, 0) + 1
        module.__dict__["_attr_uses"] = uses
    return module.__dict__["_attr_uses"]     # type: ignore[no-any-return]


def self_calls(module: Module, cls: str, name: str,
                ) -> Iterator[tuple[ast.Call, Scope, Guards]]:
    """``self.name(...)`` in the methods of ``cls`` (``self``: the method's first parameter)."""
    for (owner, _method), caller in module.methods.items():
        if owner != cls or not caller.params:
            continue
        for node in caller.calls:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == name and \
                    isinstance(func.value, ast.Name) and func.value.id == caller.params[0] and \
                    func.value.id not in caller.binds:
                yield node, caller, caller.call_guards.get(id(node), ())


def calls(module: Module, scope: Scope, made: Any) -> Iterator[tuple[Call, Scope]]:
    """The calls of ``scope`` read once per call of the method (:func:`sites`), each made by
    ``made(scope)`` as :meth:`.pysource.Module.calls` makes them."""
    for bound, when in sites(module, scope) or ():
        for call, at in made(bound):
            yield (call if when is None or call.when is not None else replace(call, when=when),
                   at)
