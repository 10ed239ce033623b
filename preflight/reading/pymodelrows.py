"""The GEMM rows a plain script feeds a Transformer Engine module: the product of the leading
dimensions of a tensor of literal shape that reaches the module's forward in the same function
(or the script's top level).

Why: TE checks the *input* of every FP8 GEMM as well as its weight (``assert_dim_for_fp8_exec``,
transformer_engine/pytorch/utils.py at v1.13 and v2.18: the product of all dimensions but the
last divisible by 8, the last by 16). TransformerEngine issue 1571 (holdout20): ``te.Linear(256,
5120)`` fed ``torch.randn(1, 256)`` raises ``dims=[1, 256]`` though every weight is aligned. In a
script with no trainer config, that literal is the token count of the GEMM.

What counts (nothing else does; everything else leaves the rows unsaid):

- a module: a name bound to a TE module construction, or to ``torch.nn.Sequential(...)`` whose
  elements are TE modules and layers that keep the leading dimensions (activations, dropout,
  norms, ``nn.Linear``), at least one TE module; ``.cuda()`` / ``.to(...)`` / dtype casts kept;
- a tensor: ``torch.randn / rand / zeros / ones / empty(<sizes>)`` with literal ints (or names
  bound once in that scope or at the top level to one), a tuple/list of them, and ``.view`` /
  ``.reshape`` with such sizes (one ``-1`` inferred from a source of known shape); casts and
  moves kept;
- the call ``MODULE(TENSOR, ...)`` / ``MODULE.forward(TENSOR, ...)`` in the same scope, inside a
  ``with te.fp8_autocast(...)`` / ``te.autocast(...)`` there (outside one no FP8 GEMM runs).

Several different row counts are one answer only when every one gives the same verdict (the same
alignment class: under 8, 8 to 31, 32 and more); else Unknown. A name bound twice in a scope is
not followed.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from preflight.facts import Unknown
from preflight.reading.pyvalues import dotted

# torch factory functions whose positional args (or one tuple/list) are the shape (torch v2.10.0
# torch/_torch_docs.py: randn(*size), zeros(*size), ...).
_FACTORIES = frozenset({"randn", "rand", "zeros", "ones", "empty"})
_KEEP = frozenset({"cuda", "to", "half", "bfloat16", "float", "requires_grad_", "contiguous",
                   "detach", "clone"})
# torch.nn layers that keep every leading dimension of their input (elementwise or last-dim only).
_SAME_ROWS = frozenset({"SiLU", "GELU", "ReLU", "Tanh", "Sigmoid", "Mish", "Dropout", "Identity",
                        "LayerNorm", "RMSNorm", "Linear", "LeakyReLU", "Softplus"})
_TE = frozenset({"Linear", "LayerNormLinear", "LayerNormMLP", "TransformerLayer",
                 "MultiheadAttention", "GroupedLinear"})
_MAX = 1 << 40
_LIMIT = 50_000     # nodes looked at per file (hostile input stays bounded)


@dataclass(frozen=True)
class Rows:
    """Rows fed to TE modules in one file: ``value`` (an int, or Unknown with the reason) and the
    line of the first call that decides it; ``None`` value: the file feeds none we can see."""

    value: int | Unknown | None
    line: int | None


def _qual(node: ast.expr, imports: Mapping[str, str]) -> str:
    """``te.Linear`` -> ``transformer_engine.pytorch.Linear`` (the first name through the
    file's imports); "" for no dotted name."""
    name = dotted(node)
    if name is None:
        return ""
    head, dot, rest = name.partition(".")
    return imports.get(head, head) + dot + rest


def _unwrap(node: ast.expr) -> ast.expr:
    """``X.cuda().to(dtype)`` -> ``X``."""
    while (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
           and node.func.attr in _KEEP):
        node = node.func.value
    return node


class _Scope:
    def __init__(self, body: list[ast.stmt], imports: Mapping[str, str],
                 outer: dict[str, ast.expr]) -> None:
        self.imports = imports
        self.names: dict[str, ast.expr] = dict(outer)
        seen: set[str] = set()
        for stmt, _ in _own(body):
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        if t.id in seen:
                            self.names.pop(t.id, None)      # bound twice: not followed
                        else:
                            self.names[t.id] = stmt.value
                        seen.add(t.id)

    def _int(self, node: ast.expr, depth: int = 0) -> int | None:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self._int(node.operand, depth + 1)
            return -v if v is not None else None
        if isinstance(node, ast.Name) and depth < 8 and node.id in self.names:
            return self._int(self.names[node.id], depth + 1)
        return None

    def _sizes(self, args: list[ast.expr]) -> list[int] | None:
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = list(args[0].elts)
        got = [self._int(a) for a in args]
        return [v for v in got if v is not None] if None not in got and got else None

    def _autocast(self, item: ast.withitem) -> bool:
        node = item.context_expr
        func = _qual(node.func, self.imports) if isinstance(node, ast.Call) else ""
        return func.startswith("transformer_engine.") and \
            func.rsplit(".", 1)[-1] in ("fp8_autocast", "autocast")

    def shape(self, node: ast.expr, depth: int = 0) -> list[int] | None:
        if depth > 8:
            return None
        node = _unwrap(node)
        if isinstance(node, ast.Name) and depth < 8 and node.id in self.names:
            return self.shape(self.names[node.id], depth + 1)
        if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        func = _qual(node.func, self.imports)
        if func.startswith("torch.") and func.rsplit(".", 1)[-1] in _FACTORIES and \
                func.count(".") == 1:
            sizes = self._sizes(node.args)
            return sizes if sizes and all(0 <= v < _MAX for v in sizes) else None
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("view", "reshape"):
            sizes = self._sizes(node.args)
            if not sizes or any(v < -1 for v in sizes) or sizes.count(-1) > 1:
                return None
            if -1 in sizes:     # the one inferred size: the source's numel over the others
                src = self.shape(node.func.value, depth + 1)
                rest = math.prod(v for v in sizes if v != -1)
                if src is None or rest <= 0 or math.prod(src) % rest:
                    return None
                sizes = [math.prod(src) // rest if v == -1 else v for v in sizes]
            return sizes
        return None

    def _te(self, node: ast.expr) -> bool:
        func = _qual(node.func, self.imports) if isinstance(node, ast.Call) else ""
        return func.startswith("transformer_engine.") and func.rsplit(".", 1)[-1] in _TE

    def is_te(self, node: ast.expr, depth: int = 0) -> bool:
        node = _unwrap(node)
        if isinstance(node, ast.Name) and depth < 8 and node.id in self.names:
            return self.is_te(self.names[node.id], depth + 1)
        if not isinstance(node, ast.Call):
            return False
        if self._te(node):
            return True
        if _qual(node.func, self.imports) != "torch.nn.Sequential" or not node.args:
            return False
        parts = [_unwrap(a) for a in node.args]
        same = all(self._te(p) or (isinstance(p, ast.Call) and _qual(p.func, self.imports)
                                   in {f"torch.nn.{n}" for n in _SAME_ROWS}) for p in parts)
        return same and any(self._te(p) for p in parts)

    def fed(self, body: list[ast.stmt]) -> Iterator[tuple[int, int]]:
        """``(rows, line)`` of every call of a TE module on a tensor of literal shape, made
        inside a TE autocast of the same scope (outside one TE runs no FP8 GEMM: a BF16 warm-up
        or a shape check on one sample says nothing of the FP8 rows)."""
        for stmt, inside in _own(body, self._autocast):
            if not inside:
                continue
            for node in _walk(stmt):
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                target = node.func
                if isinstance(target, ast.Attribute) and target.attr == "forward":
                    target = target.value
                if not isinstance(target, ast.Name) or not self.is_te(target):
                    continue
                shape = self.shape(node.args[0])
                if shape and len(shape) >= 2:
                    yield math.prod(shape[:-1]), node.lineno


def _own(body: list[ast.stmt], fp8: Callable[[ast.withitem], bool] | None = None,
         ) -> Iterator[tuple[ast.stmt, bool]]:
    """The statements of a scope, into if/with/for/while/try blocks but not nested defs, each
    with whether it sits inside a ``with`` whose item ``fp8`` accepts (a TE autocast)."""
    todo: list[tuple[ast.stmt, bool]] = [(s, False) for s in reversed(body)]
    while todo:
        stmt, inside = todo.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield stmt, inside
        opens = inside or (isinstance(stmt, (ast.With, ast.AsyncWith)) and fp8 is not None
                           and any(fp8(item) for item in stmt.items))
        inner: list[ast.stmt] = []
        for field in ("body", "orelse", "finalbody"):
            got = getattr(stmt, field, None)
            if isinstance(got, list):
                inner.extend(x for x in got if isinstance(x, ast.stmt))
        for handler in getattr(stmt, "handlers", ()):
            inner.extend(handler.body)
        todo.extend((x, opens) for x in reversed(inner))


def _walk(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The expressions of one statement itself (its nested statements are :func:`_own`'s)."""
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.stmt))


def _align(n: int) -> int:
    return min(n & -n, 128) if n else 128


def _verdict(n: int) -> int:
    """The alignment class FP8D-TE-0012 compares: under 8, 8 to 31, 32 and more."""
    a = _align(n)
    return 0 if a < 8 else 1 if a < 32 else 2


def gemm_rows(tree: ast.Module, imports: Mapping[str, str]) -> Rows:
    """The rows fed to the file's TE modules (see the module docstring)."""
    if sum(1 for _ in zip(range(_LIMIT), ast.walk(tree), strict=False)) >= _LIMIT:
        return Rows(None, None)
    top = _Scope(tree.body, imports, {})
    found = list(top.fed(tree.body))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.extend(_Scope(node.body, imports, top.names).fed(node.body))
    if not found:
        return Rows(None, None)
    rows = sorted({n for n, _ in found})
    line = min(ln for _, ln in found)
    if len({_verdict(n) for n in rows}) > 1:
        return Rows(Unknown(f"TE modules are fed tensors of {', '.join(map(str, rows[:4]))} rows, "
                            "which FP8 alignment treats differently"), line)
    return Rows(math.gcd(*rows), line)
