"""A method's ``if self.flag:`` read once per construction of its class, for
:func:`.pyowngate.condition` (holdout17, modded-nanogpt issue 92).

KellerJordan/modded-nanogpt's record of issue 92 builds one linear class four times and only
the last with FP8 (train_gpt.py:212-231 ``class CastedLinear(nn.Linear)``, ``__init__(...,
use_fp8=False, ...)`` sets ``self.use_fp8 = use_fp8``; ``forward`` runs ``if self.use_fp8 and
self.training: torch.ops.nanogpt.mm(...)`` over ``torch._scaled_mm``; l.266/290/291 build it
without ``use_fp8``, l.331 ``self.lm_head = CastedLinear(..., use_fp8=True, ...)``). Read as one
value, ``self.use_fp8`` is "called with different values" and the FP8 matmul Unknown; but each
object is its own ``self``: the lm_head's forward runs the FP8 matmul, the others' do not.

:func:`tests`: the test of ``if`` in a method of a class of the file, once per ``Cls(...)`` call
the file shows, each ``self.attr`` that ``__init__`` sets (and no other method sets) replaced by
the value that construction gives it (its arguments bound to ``__init__``'s parameters, or
their defaults, as :func:`.pyforeign.bind`). A construction under a test decided false is
left out; one under a test not decided gives its state with the test. The caller decides the
``if``: some construction takes it (the objects built are used: a call in a method runs for
each object whose method is called), none does, or Unknown. Not read per construction (None:
the caller goes on as before): a class the file also uses as a value or subclasses, built by
another file, with a ``*args``/``**kwargs`` ``__init__``, more than :data:`MAX_BUILDS` calls,
or a test that reads no ``self.attr``.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from preflight.reading.pyguards import truth
from preflight.reading.pyvalues import MAX_DEPTH, Unresolved

if TYPE_CHECKING:
    from collections.abc import Callable

    from preflight.reading.pyguards import Guard
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

MAX_BUILDS = 32
"""Constructions of one class read, each a value per ``self.attr``."""
MAX_ATTRS = 8
"""``self.attr`` of one test replaced."""
_CONSTANT = (bool, int, float, str, type(None))


def tests(module: Module, scope: Scope, test: ast.expr
          ) -> list[tuple[ast.expr, Unresolved | None]] | None:
    """``test`` (of an ``if`` in the method ``scope``) once per construction of its class, with
    the state of that construction (None: it is made), or None where not read so (module
    docstring)."""
    owner = module.owners.get(id(scope))
    if owner is None or owner[0] is None or owner[1] == "__init__" or not scope.params:
        return None
    cls, me = owner[0], scope.params[0]
    attrs = sorted({n.attr for n in ast.walk(test) if isinstance(n, ast.Attribute) and
                    isinstance(n.value, ast.Name) and n.value.id == me})
    init = module.methods.get((cls, "__init__"))
    builds = module._sites.get(cls, [])
    if not attrs or len(attrs) > MAX_ATTRS or init is None or init.node is None or \
            not init.params or not builds or len(builds) > MAX_BUILDS or \
            cls in module._escapes or cls in module.bindings or _subclassed(module, cls):
        return None
    from preflight.reading.pycallers import reached
    from preflight.reading.pyforeign import bind
    out: list[tuple[ast.expr, Unresolved | None]] = []
    for node in builds:
        caller = module.call_scope.get(id(node))
        if caller is None:
            return None
        if caller is not module.module and not reached(module, caller):
            continue    # built in a function nothing calls: no such object (redteam12)
        guards = caller.call_guards.get(id(node), ())
        state = module.runs(guards, caller, calls=True) if guards else True
        if state is False:
            continue
        values = bind(init, node, lambda a, c=caller: module.evaluate(a, c, 1),
                      lambda d: module.evaluate(d, module.module, 1), skip=1)
        if values is None:
            return None
        bound = replace(init, values=values)
        module.owners[id(bound)] = module.owners[id(init)]
        module.__dict__.setdefault("_kept", []).append(bound)
        given = {a: _attr(module, cls, bound, a) for a in attrs}
        out.append((_replaced(test, me, given), state if isinstance(state, Unresolved)
                    else None))
    return out


def decide(module: Module, scope: Scope, guard: Guard, evaluate: Callable[[ast.expr], Any]
           ) -> bool | str | None:
    """Whether the call under ``guard`` (an ``if`` in the method ``scope``) is made for some
    object the file builds: True (some construction takes the branch), a string (some does on a
    training job on CUDA, :func:`.pyowngate.cuda_test`: what it needs), False (none does), None
    (not decided: the caller goes on as before)."""
    from preflight.reading.pyowngate import cuda_test

    per = tests(module, scope, guard.test) if guard.test is not None else None
    if per is None:
        return None
    module.__dict__.setdefault("_kept", []).extend(t for t, _ in per)   # ids stay their own
    cuda, open_ = "", False
    for test, state in per:
        value = truth(evaluate(test))
        positive, what = (value, "") if value is not None else cuda_test(test, evaluate)
        if positive is None or state is not None:
            open_ = open_ or positive is None or positive == guard.holds
        elif positive == guard.holds and value is not None:
            return True
        elif positive == guard.holds:
            cuda = cuda or what
    return cuda or (None if open_ else False)


def _subclassed(module: Module, cls: str) -> bool:
    return any(isinstance(b, ast.Name) and b.id == cls
               for c in module.classes.values() for b in c.bases)


def _attr(module: Module, cls: str, init: Scope, attr: str) -> Any:
    """``self.attr`` as the bound ``init`` sets it, when no other method sets it."""
    from preflight.reading.pyprops import NOT_SET, apply_sets

    for (owner, method), scope in module.methods.items():
        if owner == cls and method != "__init__" and scope.params and any(
                path[:1] == (attr,) for path, *_ in scope.sets.get(scope.params[0], ())):
            return NOT_SET
    sets = [(path, value, line, guards) for path, value, line, guards
            in init.sets.get(init.params[0], ()) if path == (attr,)]
    return apply_sets(module, init, (cls, attr), sets, NOT_SET, MAX_DEPTH - 2) if sets \
        else NOT_SET


def _replaced(test: ast.expr, me: str, given: dict[str, Any]) -> ast.expr:
    """A copy of ``test`` with each ``me.attr`` whose value is a constant put in its place."""

    class _Put(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            value = given.get(node.attr)
            if isinstance(node.value, ast.Name) and node.value.id == me and \
                    isinstance(value, _CONSTANT):
                return ast.copy_location(ast.Constant(value), node)
            return self.generic_visit(node)

    tree = _Put().visit(ast.parse(ast.unparse(test), mode="eval"))
    body: ast.expr = tree.body
    return body
