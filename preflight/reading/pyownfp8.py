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
from dataclasses import dataclass
from functools import lru_cache

from preflight.reading.pyvalues import Unresolved

MARKERS = frozenset({"_scaled_mm", "_scaled_grouped_mm"})
"""torch's FP8 GEMMs (``torch._scaled_mm``, ``torch.ops.aten._scaled_mm``, torch 2.9
``torch._scaled_grouped_mm``): a job calling them runs FP8 matmuls of its own."""
MAX_DEPTH = 8
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
    """Where a name's code reaches an FP8 matmul: the chain of names and the marker's line."""

    chain: tuple[str, ...]
    marker: str
    line: int

    def what(self, path: str) -> str:
        return (f"the job's own FP8 matmul: {' -> '.join(self.chain)} calls torch.{self.marker} "
                f"({path}:{self.line})")


def definitions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef |
                                          ast.ClassDef]:
    """The module's top-level functions and classes by name (the last definition binds)."""
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            # `convert = None` after the def rebinds the name: no longer the function
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    out.pop(target.id, None)
    return out


def reaches(tree: ast.Module, name: str) -> Own | None:
    """Where calling ``name`` (a top-level function or class of ``tree``) reaches a
    :data:`MARKERS` call, through the module's own definitions; None when it does not (or
    ``name`` is not defined there)."""
    graph = _graph(tree)
    todo: list[tuple[str, tuple[str, ...]]] = [(name, (name,))]
    seen: set[str] = set()
    while todo:
        current, chain = todo.pop(0)
        if current not in graph or current in seen or len(chain) > MAX_DEPTH:
            continue
        seen.add(current)
        marker, calls = graph[current]
        if marker is not None:
            return Own(chain, *marker)
        todo.extend((got, (*chain, got)) for got in calls if got not in seen)
    return None


Node = tuple["tuple[str, int] | None", tuple[str, ...]]


@lru_cache(maxsize=4)
def _graph(tree: ast.Module) -> dict[str, Node]:
    """For each top-level definition: its first marker (name, line) and the definitions it
    calls; one walk of the module (kept for the last few trees: a file's calls ask again),
    :data:`MAX_NODES` nodes at most (past them a definition reaches nothing here)."""
    defs = definitions(tree)
    out: dict[str, Node] = {}
    nodes = 0
    for name, node in defs.items():
        marker: tuple[str, int] | None = None
        calls: dict[str, None] = {}
        for sub in ast.walk(node):
            nodes += 1
            if nodes > MAX_NODES:
                return out
            if isinstance(sub, ast.Attribute) and sub.attr in MARKERS or \
                    isinstance(sub, ast.Name) and sub.id in MARKERS:
                marker = (sub.attr if isinstance(sub, ast.Attribute) else sub.id, sub.lineno)
                break
            got = called(sub)
            if got is not None and got in defs and got != name:
                calls[got] = None
        out[name] = (marker, tuple(calls))
    return out


def called(node: ast.AST) -> str | None:
    """The top-level name a call calls: ``F(...)``, ``F.from_float(...)``, ``F.apply(...)``
    (a class named as an argument, ``isinstance(m, Float8Linear)``, is not followed: looking
    for FP8 layers to swap back is no conversion)."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute):
        func = func.value
    return func.id if isinstance(func, ast.Name) else None


@dataclass(frozen=True)
class OnCuda(Unresolved):
    """A call's condition that only says the job runs on a CUDA device (``if device_type ==
    "cuda":``, ``if torch.cuda.is_available():``): every reader still takes it as not decided
    (Unknown); FP8 of the job's own code, which runs only on CUDA, takes it as holding on the
    NVIDIA GPU fp8-doctor checks the job for."""


def on_cuda(tree: ast.AST, line: int, when: Unresolved | None) -> Unresolved | None:
    """``when`` as :class:`OnCuda` where it is an ``if`` whose test is a CUDA-device test and
    the statement at ``line`` sits directly in its CUDA branch (its body for ``== "cuda"`` /
    ``is_available()``, its ``else`` for ``!= "cuda"`` / ``not ...``); else ``when``."""
    if when is None or isinstance(when, OnCuda) or when.line is None:
        return when
    for node in _ifs(tree).get(when.line, ()):
        positive = _cuda_test(node.test)
        branch = node.body if positive else node.orelse
        if positive is not None and any(
                stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) and
                isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) for stmt in branch):
            return OnCuda(when.reason, when.line)
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


def _cuda_test(test: ast.expr) -> bool | None:
    """True for a test that holds on CUDA (``x == "cuda"``, ``torch.cuda.is_available()``),
    False for its negation, None for anything else."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _cuda_test(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.Call) and ast.unparse(test.func).endswith("cuda.is_available") \
            and not test.args:
        return True
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
            isinstance(test.ops[0], (ast.Eq, ast.NotEq)) and \
            any(isinstance(side, ast.Constant) and side.value == "cuda"
                for side in (test.left, test.comparators[0])):
        return isinstance(test.ops[0], ast.Eq)
    return None
