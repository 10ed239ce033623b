"""A call inside a training loop under a per-step test: it runs when the test holds in some
step the loop surely makes (holdout18: yxanul/yxanul_0.6B @ e310bfe0, train/train_fp8_optimized.py
l.268-288, ``for iter_num in range(config.max_iters):`` ... ``use_fp8_now = config.use_fp8 and
(iter_num >= config.fp8_warmup_steps)`` ... ``if use_fp8_now: with te.fp8_autocast(...)``: FP8
after a 100-step BF16 warm-up, launched with ``--max_iters 200``; it was Unknown, "use_fp8_now is
set inside a loop"), for :meth:`.pysource.Module.runs`.

Read, never run: in each enclosing ``for V in range(...)`` whose bounds the text gives (and the
loop is not empty), ``V`` is tried at its first and at its last value; a name the loop body binds
once, by a plain assignment written directly in the body before the test, is that expression
(its value in the same step). A test that holds at one of those steps is a witness: that step
runs the call. Only ever "runs" from a witness; a test false at both ends (it may hold in the
middle) stays undecided, with the reason it had. Bounded: :data:`MAX_LOOPS` loops,
:data:`MAX_INLINE` substitutions.
"""

from __future__ import annotations

import ast
import copy
import itertools
from typing import TYPE_CHECKING, Any

from preflight.reading.pyguards import Guards, decide, truth
from preflight.reading.pyscopes import Scope
from preflight.reading.pyvalues import Ref, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pysource import Module

MAX_LOOPS = 3
"""Enclosing loops whose variables are tried (2 values each)."""
MAX_INLINE = 8
"""Names replaced by the expression the loop body binds them to, nested."""
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _loops(module: Module, scope: Scope) -> dict[int, ast.stmt]:
    """The loops of ``scope``'s body by line (nested function bodies excluded)."""
    made: dict[int, dict[int, ast.stmt]] = module.__dict__.setdefault("_loopstep", {})
    key = id(scope)
    if key not in made:
        root: ast.AST = scope.node if scope.node is not None else module.tree
        found: dict[int, ast.stmt] = {}
        todo = list(ast.iter_child_nodes(root))
        while todo:
            node = todo.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(node, _LOOPS):
                found.setdefault(node.lineno, node)
            todo.extend(ast.iter_child_nodes(node))
        made[key] = found
    return made[key]


def _stores(loop: ast.stmt, name: str) -> int:
    return sum(1 for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == name and
               isinstance(n.ctx, ast.Store))


def _body_names(loop: ast.stmt, before: int) -> dict[str, ast.expr]:
    """Names the loop body binds once, directly, before line ``before``: their expressions."""
    out: dict[str, ast.expr] = {}
    for stmt in getattr(loop, "body", ()):
        if stmt.lineno >= before:
            break
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name) and \
                _stores(loop, stmt.targets[0].id) == 1:
            out[stmt.targets[0].id] = stmt.value
    return out


def _ends(module: Module, loop: ast.stmt, scope: Scope, depth: int) -> tuple[str, list[int]] | None:
    """``for V in range(...)``: V and its first and last values; None otherwise or when empty."""
    if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name) or \
            _stores(loop, loop.target.id) != 1 or not isinstance(loop.iter, ast.Call) or \
            not isinstance(loop.iter.func, ast.Name) or loop.iter.func.id != "range" or \
            loop.iter.keywords or not 1 <= len(loop.iter.args) <= 3 or \
            not _is_range(module.evaluate(loop.iter.func, scope, depth + 1)):
        return None
    got = [module.evaluate(a, scope, depth + 1) for a in loop.iter.args]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in got):
        return None
    start, stop, step = (0, got[0], 1) if len(got) == 1 else (*got, 1)[:3]
    steps = range(start, stop, step) if step else range(0)
    if not steps:
        return None
    return loop.target.id, sorted({steps[0], steps[-1]})


class _Sub(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.expr]) -> None:
        self.values, self.spent, self.bad = values, 0, False

    def visit_Name(self, node: ast.Name) -> Any:
        if not isinstance(node.ctx, ast.Load) or node.id not in self.values:
            return node
        self.spent += 1
        if self.spent > MAX_INLINE:
            self.bad = True
            return node
        return ast.copy_location(self.visit(copy.deepcopy(self.values[node.id])), node)

    def generic_visit(self, node: ast.AST) -> Any:
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp, ast.NamedExpr)):
            self.bad = True         # names of their own: not substituted
            return node
        return super().generic_visit(node)


def after(module: Module, got: bool | Unresolved, guards: Guards, scope: Scope, depth: int,
          calls: bool) -> bool | Unresolved:
    """``got`` (:func:`.pyguards.decide`'s answer), or True where it is undecided for a call
    and a step of the enclosing loops is a witness (:func:`some_step`)."""
    if calls and isinstance(got, Unresolved):
        return some_step(module, guards, scope, depth) or got
    return got


def some_step(module: Module, guards: Guards, scope: Scope, depth: int) -> bool | None:
    """True when a step of the loops ``guards`` hold the call in surely runs it; else None."""
    loops = _loops(module, scope)
    at = [i for i, g in enumerate(guards) if g.loop]
    if not at or depth > 40:
        return None
    outside = decide(guards[:at[0]], lambda n: module.evaluate(n, scope, depth + 1), True)
    if outside is not True:
        return None
    inner = guards[at[0]:]
    tests = [g for g in inner if g.test is not None]
    if not tests or any(g.test is None and not g.loop for g in inner):
        return None
    names: dict[str, ast.expr] = {}
    tried: list[tuple[str, list[int]]] = []
    for g in [g for g in inner if g.loop][-MAX_LOOPS:]:
        loop = loops.get(g.line)
        if loop is None or _cut(loop):
            return None
        names.update(_body_names(loop, min(t.line for t in tests)))
        ends = _ends(module, loop, scope, depth)
        if ends is not None:
            tried.append(ends)
    for values in itertools.product(*(v for _, v in tried)):
        given = dict(names)
        given.update((n, ast.Constant(w)) for (n, _), w in zip(tried, values))
        if all(_holds(module, g, given, scope, depth) for g in tests):
            return True
    return None


def _holds(module: Module, guard: Any, given: dict[str, ast.expr], scope: Scope,
           depth: int) -> bool:
    sub = _Sub(given)
    try:
        test = sub.visit(copy.deepcopy(guard.test))
        if sub.bad:
            return False
        ast.fix_missing_locations(test)
        value = truth(module.evaluate(test, scope, depth + 1))
    except RecursionError:      # a test nested past the interpreter's depth: no witness
        return False
    return value == guard.holds or (value is None and guard.returns)


_EXITS = frozenset({"exit", "quit", "_exit", "abort"})


def _cut(loop: ast.stmt) -> bool:
    """Whether the loop may stop or skip before a step reaches the test (redteam12: ``if it ==
    10: break`` before ``if it >= 100:`` and the last step was a witness of a call that never
    runs): a ``break`` / ``continue`` of this loop, a ``return``, a ``raise`` outside an
    ``except`` handler, ``sys.exit()`` / ``exit()`` / ``os._exit()`` in its body (nested
    functions and classes aside)."""
    todo: list[tuple[ast.AST, bool]] = [(s, True) for s in (*getattr(loop, "body", ()),
                                                            *getattr(loop, "orelse", ()))]
    while todo:
        node, own = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
                             ast.ExceptHandler)):
            continue
        if isinstance(node, (ast.Break, ast.Continue)) and own or \
                isinstance(node, (ast.Return, ast.Raise)):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else \
                func.id if isinstance(func, ast.Name) else ""
            if name in _EXITS:
                return True
        nested = own and not isinstance(node, _LOOPS)
        todo.extend((child, nested) for child in ast.iter_child_nodes(node))
    return False


def _is_range(value: Any) -> bool:
    return isinstance(value, Ref) and value.name == "builtins.range"


__all__ = ["after", "some_step"]
