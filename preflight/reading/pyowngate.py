"""Which of a job module's own definitions a call calls, and whether the call runs, for the
job's own FP8 (:mod:`.pyownfp8`, issue 22: holdout12 modded-nanogpt).

KellerJordan/modded-nanogpt @ f411b3d3 ``train_gpt.py`` defines its FP8 matmul as a custom op
(l.70 ``@torch.library.custom_op("nanogpt::mm_t", ...)`` over ``torch._scaled_mm``), registers
its backward at the top level (l.162 ``mm_t_op.register_autograd(...)``) and calls it by its
registered name only where a flag says so (l.979-980 ``if self.use_fp8 and self.training:
torch.ops.nanogpt.mm_t(...)``, ``use_fp8 = not os.environ.get("DISABLE_FP8", False)`` l.1224).
Registering an op, defining it, or wrapping it runs no FP8 matmul; calling it does. So:

- :class:`Defs`: a call's target among the module's top-level functions and classes: ``F(...)``,
  ``F.apply(...)`` / ``F.from_float(...)``, a custom op by its name (``torch.ops.NS.NAME(...)``,
  ``.default(...)``) where ``torch.library.custom_op`` / ``triton_op`` / ``impl`` registers it
  (decorator, or ``NAME = custom_op("NS::NAME", ...)(F)``), and a top-level alias (``A =
  F.apply``, ``A = torch.compile(F)``, ``A = functools.partial(F, ...)``, ``F =
  torch.compile(F)`` keeps ``F``); ``F.register_autograd(...)`` / ``register_fake`` / any
  ``register_*`` is registration, no call.
- :func:`condition`: whether a call runs, as :meth:`.pysource.Module.runs` decides its ``if``
  tests (flags from the launch line's environment and argv, ``self.x`` as ``__init__`` sets it
  from what every construction passes, constants): True, False (a branch that does not run: the
  call is not made), or Unresolved with the test; a test that holds for a training job on the
  NVIDIA GPU checked (``if self.training:``, ``if x.is_cuda:``, ``torch.cuda.is_available()``,
  ``and`` of those with operands the text gives as true) is :class:`.pyownfp8.OnCuda`.

Read from the syntax tree only, never imported or run.
"""

from __future__ import annotations

import ast
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from preflight.reading import pyconstruct
from preflight.reading.pyguards import truth
from preflight.reading.pyvalues import Unresolved

if TYPE_CHECKING:
    from preflight.reading.pysource import Module

Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef

_OP = re.compile(r"(?:^|\.)ops\.(\w+)\.(\w+)(?:\.default)?$")
"""``torch.ops.NS.NAME`` (its ``.default`` overload too): the custom op ``NS::NAME``."""
_REGISTERS = ("custom_op", "triton_op", "impl")
"""``torch.library`` calls whose first argument names the op the function implements."""
_WRAPS = ("compile", "partial", "script", "trace", "custom_op", "triton_op", "wraps", "jit")
"""Calls that hand back the function they are given (called later as that function)."""


def _register_name(node: ast.expr) -> str | None:
    """``NS::NAME`` of a ``custom_op("NS::NAME", ...)`` / ``triton_op`` / ``impl`` call."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and \
            isinstance(node.args[0].value, str) and "::" in node.args[0].value and \
            _last(node.func) in _REGISTERS:
        return node.args[0].value
    return None


def _last(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else \
        node.id if isinstance(node, ast.Name) else ""


def wrapped(value: ast.expr) -> str | None:
    """The name ``value`` hands back to be called as: ``F``, ``F.apply``, ``torch.compile(F)``,
    ``partial(F, ...)``, ``custom_op("NS::N", ...)(F)``; None for anything else."""
    if isinstance(value, ast.Name):
        return value.id
    if isinstance(value, ast.Attribute) and value.attr == "apply" and \
            isinstance(value.value, ast.Name):
        return value.value.id
    if isinstance(value, ast.Call) and value.args and (
            _last(value.func) in _WRAPS or _register_name(value.func) is not None):
        return wrapped(value.args[0])
    return None


class Defs:
    """A module's top-level functions and classes by name (the last definition binds; a name
    rebound to anything but a wrapper of itself is no longer the function), its aliases and
    its custom ops by registered name."""

    def __init__(self, tree: ast.Module) -> None:
        self.defs: dict[str, Def] = {}
        self.aliases: dict[str, str] = {}
        self.ops: dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defs[node.name] = node
                self.aliases.pop(node.name, None)
                for deco in node.decorator_list:
                    op = _register_name(deco)
                    if op is not None:
                        self.ops[op] = node.name
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                # `from other import CastedLinear` after the class: the import binds the name
                # (redfix12; pyrebound.drop_shadowed does the same for pyscopes.Module)
                for alias in node.names:
                    name = (alias.asname or alias.name).split(".")[0]
                    self.defs.pop(name, None)
                    self.aliases.pop(name, None)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                inner = wrapped(node.value)
                op = _register_name(node.value.func) if isinstance(node.value, ast.Call) \
                    else None
                for target in targets:
                    if not isinstance(target, ast.Name):
                        continue
                    if inner is not None and inner == target.id and inner in self.defs:
                        pass                        # `f = torch.compile(f)`: still f
                    elif inner is not None and self.resolve(inner) is not None:
                        self.defs.pop(target.id, None)
                        self.aliases[target.id] = self.resolve(inner) or inner
                    else:       # `convert = None` after the def: no longer the function
                        self.defs.pop(target.id, None)
                        self.aliases.pop(target.id, None)
                    if op is not None and inner is not None and self.resolve(inner):
                        self.ops[op] = self.resolve(inner) or inner

    def resolve(self, name: str) -> str | None:
        """The definition ``name`` calls (itself, or what an alias wraps), or None."""
        if name in self.defs:
            return name
        return self.aliases.get(name)

    def target(self, node: ast.AST) -> str | None:
        """The definition a call calls (see the module's docstring); None for any other call,
        for a class named as an argument (``isinstance(m, Float8Linear)``: looking for FP8
        layers to swap back is no conversion) and for registration (``F.register_fake``)."""
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr.startswith("register") or func.attr == "impl_abstract":
                return None         # registering an op's backward / fake kernel runs nothing
            op = _OP.search(_dotted(func))
            if op is not None:
                return self.ops.get(f"{op.group(1)}::{op.group(2)}")
            func = func.value
        return self.resolve(func.id) if isinstance(func, ast.Name) else None


def _dotted(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute) and len(parts) < 8:
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


_DEFS: weakref.WeakKeyDictionary[ast.Module, Defs] = weakref.WeakKeyDictionary()


def defs_of(tree: ast.Module) -> Defs:
    """:class:`Defs` of ``tree`` (worked out once per tree)."""
    got = _DEFS.get(tree)
    if got is None:
        got = _DEFS[tree] = Defs(tree)
    return got


@dataclass(frozen=True)
class OnCuda(Unresolved):
    """A call's condition that only says the job runs on a CUDA device (``if device_type ==
    "cuda":``, ``if torch.cuda.is_available():``) or trains (``if self.training:``, PyTorch's
    flag of a module in training mode, the mode a training step runs in): every reader still
    takes it as not decided (Unknown); FP8 of the job's own code, which runs only on CUDA,
    takes it as holding for the training job on the NVIDIA GPU fp8-doctor checks it for."""

    holds: str = "on CUDA"


def cuda_test(test: ast.expr, evaluate: Callable[[ast.expr], Any] | None = None,
               ) -> tuple[bool | None, str]:
    """(True, what) for a test that holds on CUDA in training (``x == "cuda"``,
    ``torch.cuda.is_available()``, ``x.is_cuda``, ``self.training``), (False, what) for its
    negation, (None, "") for anything else; an ``and`` holds when each operand holds or
    ``evaluate`` gives it as true (one at least a device or training test)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner, what = cuda_test(test.operand)
        return (None, "") if inner is None else (not inner, what)
    if isinstance(test, ast.Attribute) and test.attr in ("training", "is_cuda"):
        return True, "in training" if test.attr == "training" else "on CUDA"
    if isinstance(test, ast.Call) and ast.unparse(test.func).endswith("cuda.is_available") \
            and not test.args:
        return True, "on CUDA"
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
            isinstance(test.ops[0], (ast.Eq, ast.NotEq)) and \
            any(isinstance(side, ast.Constant) and side.value == "cuda"
                for side in (test.left, test.comparators[0])):
        return isinstance(test.ops[0], ast.Eq), "on CUDA"
    if evaluate is not None and isinstance(test, ast.BoolOp) and \
            isinstance(test.op, ast.And) and len(test.values) <= 8:
        whats = []
        for operand in test.values:
            positive, what = cuda_test(operand)
            if positive is True:
                whats.append(what)
            elif positive is not None or truth(evaluate(operand)) is not True:
                return None, ""
        return (True, " and ".join(dict.fromkeys(whats))) if whats else (None, "")
    return None, ""


def condition(module: Module, node: ast.Call) -> bool | Unresolved:
    """Whether ``node`` (a call in ``module``) runs: True, False (a test the text decides
    against it), Unresolved with the first test the text does not decide, or :class:`OnCuda`
    where every such test holds for a training job on CUDA (:func:`cuda_test`). A test inside
    a loop on a name the loop binds (``for name, child in mod.named_children(): if
    isinstance(child, nn.Linear):``, nanochat fp8.py @ 92d63d4e) picks the items it acts on, no
    switch: some item takes it. Otherwise as :func:`.pyguards.decide` with ``calls``."""
    scope = module.call_scope.get(id(node))
    guards = scope.call_guards.get(id(node)) if scope is not None else None
    if scope is None or not guards:
        return True
    first: Unresolved | None = None
    holds: list[tuple[str, str]] = []
    loops: set[str] = set()

    def evaluate(expr: ast.expr) -> Any:
        return module.evaluate(expr, scope, 1)

    for guard in guards[:MAX_GUARDS]:
        if guard.test is None:
            if guard.loop:
                loops |= _loop_names(module.tree, guard.line)
            elif first is None:
                first = Unresolved(guard.why, guard.line)
            continue
        value = truth(evaluate(guard.test))
        if value is not None:
            if value != guard.holds:
                return False
            continue
        positive, what = cuda_test(guard.test, evaluate)
        if positive is not None and positive == guard.holds:
            holds.append((what, f"`if {ast.unparse(guard.test)[:60]}` (line {guard.line})"))
        elif guard.returns or loops & {n.id for n in ast.walk(guard.test)
                                        if isinstance(n, ast.Name)}:
            continue    # past an early return: the main path; a loop's item test: some item
        elif first is None:
            built = pyconstruct.decide(module, scope, guard, evaluate)   # self per object
            if built is False:
                return False
            if isinstance(built, str):
                holds.append((built, f"`if {ast.unparse(guard.test)[:60]}` (line {guard.line})"))
            if built is not None:
                continue
            runs = module.runs((guard,), scope, calls=True)
            first = runs if isinstance(runs, Unresolved) else Unresolved(
                f"under `if {ast.unparse(guard.test)[:60]}` (line {guard.line}), a condition the "
                "text does not decide", guard.line)
    if first is not None:
        return first
    if holds:
        what = " and ".join(dict.fromkeys(w for w, _ in holds))
        return OnCuda(f"under {holds[0][1]}", guards[0].line, what)
    return True


MAX_GUARDS = 32
"""Conditions of one call looked at (past them: not decided)."""


def _loop_names(tree: ast.Module, line: int) -> set[str]:
    """The names a loop at ``line`` binds: its target and what its body assigns."""
    out: set[str] = set()
    for loop in _loops(tree).get(line, ()):
        for n, sub in enumerate(ast.walk(loop)):
            if n > 5_000:
                break
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                out.add(sub.id)
    return out


_LOOPS: weakref.WeakKeyDictionary[ast.Module, dict[int, list[ast.stmt]]] = \
    weakref.WeakKeyDictionary()


def _loops(tree: ast.Module) -> dict[int, list[ast.stmt]]:
    got = _LOOPS.get(tree)
    if got is None:
        got = {}
        for n, node in enumerate(ast.walk(tree)):
            if n > 200_000:
                break
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                got.setdefault(node.lineno, []).append(node)
        _LOOPS[tree] = got
    return got
