"""FP8 written by the job's own code: whether calling a function or class of a job file runs FP8
matmuls the job implements itself, on ``torch._scaled_mm`` (issue 22).

karpathy/nanochat @ 92d63d4e has no torchao: ``nanochat/fp8.py`` is "a drop-in replacement for
torchao's Float8Linear" whose ``convert_to_float8_training(module, *, config=None,
module_filter_fn=None)`` swaps each ``nn.Linear`` for its ``Float8Linear``, whose ``forward``
calls ``_Float8Matmul.apply``, whose ``forward`` / ``backward`` call ``torch._scaled_mm``
(tensorwise scales). ``scripts/base_train.py`` calls it under ``if args.fp8:`` (l.169-190). A
reader that knows only torchao's and Transformer Engine's calls saw none and said FP8 "no".

:func:`reaches` follows, from one name of a module, what its body names among the module's own
top-level functions and classes (a class: all its methods, which PyTorch calls: ``forward``),
and says where the first ``_scaled_mm`` is; only what is called is followed. Read from the syntax tree only, never imported or
run; bounded (:data:`MAX_DEPTH` hops, :data:`MAX_NODES` nodes looked at); a name defined twice
is its last definition (Python binds the last); a cycle between functions ends where it was.
Only the module's own definitions are followed: what it imports from another file of the job
is that file's (:mod:`preflight.jobs.pyimports` reads it with the calls it receives).
"""

from __future__ import annotations

import ast
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from preflight.reading import pyowngate
from preflight.reading.pyowngate import OnCuda, cuda_test
from preflight.reading.pyvalues import Ref, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pysource import Module

MARKERS = frozenset({"_scaled_mm", "_scaled_grouped_mm"})
"""torch's FP8 GEMMs (``torch._scaled_mm``, ``torch.ops.aten._scaled_mm``, torch 2.9
``torch._scaled_grouped_mm``): a job calling them runs FP8 matmuls of its own."""
MAX_DEPTH = 64
MAX_NODES = 200_000
FP8_CALL = re.compile(
    r"^(?=[a-z_])(?!.*(?:config|kwargs|recipe|args)$)(?i:convert_to_float8_training|\w*(?:to|"
    r"convert|enable|apply|swap|use)_?(?:fp8|float8)\w*|\w*(?:fp8|float8)_?(?:convert|"
    r"conversion|training|linear|layers?|model)\w*)$")
"""Names of functions that convert a model to FP8 (``convert_to_float8_training``,
``convert_to_fp8``, ``enable_fp8``, ``apply_fp8``, ``swap_to_float8_linear``, ``fp8_model``;
a function, lower-case, not a config such as torchao's ``Float8LinearConfig`` or
``fp8_linear_config``): one the job calls whose body was not read makes FP8 Unknown, never "no"."""


@dataclass(frozen=True)
class Own:
    """Where a name's code reaches an FP8 matmul: the chain of names and the marker's line;
    ``when``: the first condition on that chain the text does not decide (None: every call on
    it runs, as far as the text says)."""

    chain: tuple[str, ...]
    marker: str
    line: int
    when: Unresolved | None = None

    def what(self, path: str) -> str:
        return (f"the job's own FP8 matmul: {' -> '.join(self.chain)} calls torch.{self.marker} "
                f"({path}:{self.line})")


def definitions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef |
                                          ast.ClassDef]:
    """The module's top-level functions and classes by name (the last definition binds)."""
    return pyowngate.defs_of(tree).defs


def reaches(source: ast.Module | Module, name: str) -> Own | None:
    """Where calling ``name`` (a top-level function or class of the module, or an alias of one)
    reaches a :data:`MARKERS` call, through the module's own definitions; None when it does not
    (or ``name`` is not defined there). Given a :class:`.pysource.Module`, a call in a branch
    that does not run is not followed (:func:`.pyowngate.condition`), and a chain whose calls
    all run is preferred to one under a condition the text does not decide (``Own.when``)."""
    graph = _graph(source)
    found = pyowngate.defs_of(_tree(source))
    start = found.resolve(name)
    if start is None:
        return None
    for strict in (True, False):
        todo: list[tuple[str, tuple[str, ...], Unresolved | None]] = [(start, (name,), None)]
        seen: set[str] = set()
        while todo:
            current, chain, when = todo.pop(0)
            if current not in graph and TRUNCATED in graph and current in found.defs:
                return Own(chain, "_scaled_mm", 0, Unresolved(
                    f"{current} is past the {MAX_NODES} syntax nodes fp8-doctor follows in one "
                    "file: whether it reaches an FP8 matmul is not known"))
            if current not in graph or current in seen or len(chain) > MAX_DEPTH:
                continue
            seen.add(current)
            markers, calls = graph[current]
            for marker, line, cond in markers:
                if cond is True or not strict:
                    return Own(chain, marker, line, when or _open(cond))
            todo.extend((got, (*chain, got), when or _open(cond)) for got, cond in calls
                        if got not in seen and (cond is True or not strict))
    return None


def _open(cond: bool | Unresolved) -> Unresolved | None:
    return cond if isinstance(cond, Unresolved) else None


def _tree(source: ast.Module | Module) -> ast.Module:
    return source if isinstance(source, ast.Module) else source.tree


Site = tuple[str, int, "bool | Unresolved"]
Node = tuple[tuple[Site, ...], tuple[tuple[str, "bool | Unresolved"], ...]]
_GRAPHS: weakref.WeakKeyDictionary[Any, dict[str, Node]] = weakref.WeakKeyDictionary()


def _graph(source: ast.Module | Module) -> dict[str, Node]:
    """For each top-level definition: its markers (name, line, condition) and the definitions
    it calls with the condition of the call (a call that does not run is left out; the best
    condition of several calls of one name kept); one walk of the module (kept per tree or
    module: a file's calls ask again), :data:`MAX_NODES` nodes at most (past them a
    definition reaches nothing here). A plain tree decides no condition (every call runs)."""
    got = _GRAPHS.get(source)
    if got is not None:
        return got
    module = None if isinstance(source, ast.Module) else source
    found = pyowngate.defs_of(_tree(source))
    out: dict[str, Node] = {}
    nodes = 0

    def cond(node: ast.AST) -> bool | Unresolved:
        if module is None or not isinstance(node, ast.Call):
            return True
        return pyowngate.condition(module, node)

    aliases = _marker_aliases(_tree(source))
    for name, node in found.defs.items():
        markers: list[Site] = []
        calls: dict[str, bool | Unresolved] = {}
        funcs = {id(sub.func): sub for sub in ast.walk(node) if isinstance(sub, ast.Call)}
        for sub in ast.walk(node):
            nodes += 1
            if nodes > MAX_NODES:
                out[TRUNCATED] = ((), ())
                _GRAPHS[source] = out
                return out
            mark = _marker(sub, aliases)
            if mark is not None:
                if module is not None and not _torchs(module, funcs.get(id(sub), sub), sub):
                    continue    # the job's own `_scaled_mm`, a `torch` that is not torch
                state = cond(funcs.get(id(sub), sub))
                if state is not False and len(markers) < 8:
                    markers.append((mark, getattr(sub, "lineno", 0), state))
                continue
            target = found.target(sub)
            if target is None or target == name:
                continue
            state = cond(sub)
            if state is not False and calls.get(target) is not True:
                calls[target] = state
        markers.sort(key=lambda m: m[2] is not True)      # a marker that runs first
        out[name] = (tuple(markers), tuple(calls.items()))
    _GRAPHS[source] = out
    return out


TRUNCATED = "<truncated>"
"""A graph entry saying :data:`MAX_NODES` stopped the walk: a definition not in it is Unknown."""


def _marker(node: ast.AST, aliases: frozenset[str]) -> str | None:
    """The marker ``node`` names: ``torch._scaled_mm`` (an attribute), ``_scaled_mm`` or a
    module-level alias of it (``fp8_mm = torch._scaled_mm``, ``from torch import _scaled_mm
    as mm``), ``getattr(torch, "_scaled_mm")``."""
    if isinstance(node, ast.Attribute) and node.attr in MARKERS:
        return node.attr
    if isinstance(node, ast.Name) and (node.id in MARKERS or node.id in aliases) and \
            isinstance(node.ctx, ast.Load):
        return node.id if node.id in MARKERS else "_scaled_mm"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "getattr" and len(node.args) >= 2 and \
            isinstance(node.args[1], ast.Constant) and node.args[1].value in MARKERS:
        return str(node.args[1].value)
    return None


def _marker_aliases(tree: ast.Module) -> frozenset[str]:
    """Module-level names bound to a marker (assignment or ``from torch import``)."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and _marker(node.value, frozenset()) is not None:
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            out.update(a.asname or a.name for a in node.names if a.name in MARKERS)
    return frozenset(out)


def _torchs(module: Module, call: ast.AST, node: ast.AST) -> bool:
    """Whether a marker at ``node`` is torch's, by the module's imports: ``torch`` imported as
    the torch package (not ``import numpy as torch``, not a class or function of the job named
    ``torch`` or ``_scaled_mm``)."""
    scope = module.call_scope.get(id(call)) if isinstance(call, ast.Call) else None
    if scope is None:
        scope = next((sc for sc in module.scopes if sc.name == "<module>"), None)
    if scope is None:
        return True
    target: ast.expr | None = node if isinstance(node, ast.expr) else None
    if isinstance(node, ast.Call) and node.args:       # getattr(torch, "_scaled_mm")
        target = node.args[0]
    if target is None:
        return True
    value = module.evaluate(target, scope, 1)
    name = value.name if isinstance(value, Ref) else None
    root = target
    while isinstance(root, ast.Attribute):
        root = root.value
    return name is not None and name.split(".")[0] == "torch" and not (
        isinstance(target, ast.Attribute) and isinstance(root, ast.Name) and
        _rebound(module.tree, root.id))


def _rebound(tree: ast.Module, name: str) -> bool:
    """Whether the last module-level binding of ``name`` (what a function sees once the
    module has run) is no import: ``class torch:`` after ``import torch``."""
    last: ast.stmt | None = None
    for stmt in tree.body:
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and \
                stmt.name == name or isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name for t in stmt.targets) or \
                isinstance(stmt, (ast.Import, ast.ImportFrom)) and any(
                    (a.asname or a.name.split(".")[0]) == name for a in stmt.names):
            last = stmt
    return last is not None and not isinstance(last, (ast.Import, ast.ImportFrom))


def called(node: ast.AST, tree: ast.Module | None = None) -> str | None:
    """The top-level name a call calls: ``F(...)``, ``F.from_float(...)``, ``F.apply(...)``,
    a custom op by its registered name, an alias (with ``tree``: :meth:`.pyowngate.Defs.target`;
    registration such as ``F.register_autograd(...)`` is no call). A class named as an argument,
    ``isinstance(m, Float8Linear)``, is not followed: looking for FP8 layers to swap back is no
    conversion."""
    if tree is not None:
        return pyowngate.defs_of(tree).target(node)
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute):
        if func.attr.startswith("register"):
            return None
        func = func.value
    return func.id if isinstance(func, ast.Name) else None


def on_cuda(tree: ast.AST, line: int, when: Unresolved | None,
            evaluate: Callable[[ast.expr], Any] | None = None) -> Unresolved | None:
    """``when`` as :class:`OnCuda` where it is an ``if`` whose test holds on CUDA in training
    and the statement at ``line`` sits directly in the branch that runs then (its body for
    ``== "cuda"`` / ``is_available()`` / ``self.training``, its ``else`` for ``!= "cuda"`` /
    ``not ...``); with ``evaluate`` (the test's operands' values), also an ``and`` of such tests
    and operands the text gives as true; else ``when``."""
    if when is None or isinstance(when, OnCuda) or when.line is None:
        return when
    for node in _ifs(tree).get(when.line, ()):
        positive, what = cuda_test(node.test, evaluate)
        branch = node.body if positive else node.orelse
        if positive is not None and any(
                stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) and
                isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign,
                                  ast.Return)) for stmt in branch):
            return OnCuda(when.reason, when.line, what)
    return when


@lru_cache(maxsize=4)
def _ifs(tree: ast.AST) -> dict[int, list[ast.If]]:
    """The ``if`` statements of ``tree`` by line (one walk, :data:`MAX_NODES` nodes at most)."""
    out: dict[int, list[ast.If]] = {}
    for n, node in enumerate(ast.walk(tree)):
        if n > MAX_NODES:
            break
        if isinstance(node, ast.If):
            out.setdefault(node.lineno, []).append(node)
    return out
