"""Whether a function of a Python job file runs (issue 22), for :mod:`.pycallers`,
:mod:`.pysource` and the readers that follow a module another file of the job calls into:
:func:`reached` (the module's own code, a function called or used as a value, a method, an
``__init__`` whose class is made) and :func:`never_called` (every call of a plain function sits in
a branch the text shows does not run); each bounded by :data:`.pyvalues.MAX_DEPTH` and
:data:`MAX_SITES` calls."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from preflight.reading.pypartial import site_node
from preflight.reading.pyvalues import MAX_DEPTH

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

MAX_SITES = 32
"""Calls of one function looked at for a parameter's value (and for whether it runs)."""


def reached(module: Module, scope: Scope, depth: int = 0, seen: set[int] | None = None) -> bool:
    """Whether the code of ``scope`` runs in a module another file of the job calls into: the
    module's own code, a function it calls or the job calls (:attr:`Module.bindings`), one used
    as a value (called from anywhere), a method (called through instances)."""
    owner = module.owners.get(id(scope))
    if scope is module.module or owner is None or (owner[0] is not None and (
            owner[1] != "__init__" or _subclassed(module, owner[0]))):
        return True
    # `__init__` runs where its class is made (bionemo's modeling_esm_te.py: the
    # NVEsmModel(config, ...) of a token-classification head the job never builds made the
    # config the job passes to its masked-LM model unknown)
    name = owner[0] or owner[1]
    if name in module._escapes or name in module.bindings:
        return True
    seen = set() if seen is None else seen
    if id(scope) in seen or depth > MAX_DEPTH:
        return False
    seen.add(id(scope))
    for node in module._sites.get(name, [])[:MAX_SITES]:
        caller = scope_of(module, node)
        guards = caller.call_guards.get(id(site_node(node))) if caller is not None else None
        if caller is not None and not (guards and module.runs(guards, caller, depth=depth + 1)
                                       is False) and reached(module, caller, depth + 1, seen):
            return True
    return False


def _subclassed(module: Module, cls: str) -> bool:
    """Whether a class of the file derives from ``cls`` (its ``__init__`` runs through
    ``super().__init__``)."""
    return any(isinstance(b, ast.Name) and b.id == cls or
               isinstance(b, ast.Attribute) and b.attr == cls
               for c in module.classes.values() for b in c.bases)


def never_called(module: Module, scope: Scope, depth: int = 0,
                 seen: set[int] | None = None) -> bool:
    """A plain function of the file each of whose calls here sits in a branch the text shows
    does not run, or in a function never called so: its code does not run (TE's MNIST example:
    ``calibrate(..., args.use_fp8)`` only under ``if args.use_fp8_infer and not args.use_fp8``,
    decided false by ``--use-fp8``; its autocast's ``fp8`` made the job's FP8 unknown). A
    function with no call in the file is not one: a registry entry or an entry point is called
    from elsewhere."""
    owner = module.owners.get(id(scope))
    if scope is module.module or owner is None or owner[0] is not None or \
            owner[1] in module._escapes or owner[1] in module.bindings or owner[1] == module.entry:
        return False
    sites = module._sites.get(owner[1], [])
    seen = set() if seen is None else seen
    if not sites or len(sites) > MAX_SITES or id(scope) in seen or depth > MAX_DEPTH:
        return False
    seen.add(id(scope))
    real = 0
    for node in sites:
        caller = scope_of(module, node)
        if caller is None:
            return False
        if caller is not module.module and (owner[1] in caller.binds or owner[1] in caller.params):
            continue            # another `name` (a local one) is called there
        real += 1
        guards = caller.call_guards.get(id(site_node(node)))
        if guards and module.runs(guards, caller, depth=depth + 1) is False:
            continue
        if not never_called(module, caller, depth + 1, seen):
            return False
    return real > 0


def scope_of(module: Module, node: ast.Call) -> Scope | None:
    """The scope the call ``node`` is written in."""
    return module.call_scope.get(id(site_node(node)))
