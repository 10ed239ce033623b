"""An attribute a plain class of the job sets in its ``__init__``, for :mod:`.pyfromyaml`'s
``member`` (holdout20: ZhengPeng7/BiRefNet @ 25cb9309, config.py:6-11 ``class Config(): def
__init__(self): self.mixed_precision = ['no', 'fp16', 'bf16', 'fp8'][2]``, read by train.py:31-44
``config = Config()`` ... ``Accelerator(mixed_precision=config.mixed_precision)``: was Unknown,
"Config is no plain dataclass of the job").

Read, never run, as Python would build it: the class has no base class (``object`` aside: a base
may set or change anything) and an ``__init__`` that sets ``self.<attr> = <value>`` exactly once,
in its own body (not under an ``if``, a loop, a ``with`` or a ``try``: those may skip it or set it
again). The value is a literal, a subscript of a literal list, tuple or dict by a literal key
(``[...][2]``, ``{...}['k']``; a negative, out-of-range or missing key is Unresolved: which
element the author meant is not sure), or a parameter of ``__init__``, bound from the call (its
keyword or position) else its literal default. Anything else -- a second write, ``setattr``, a
method the script calls writing the attribute (:func:`.pyfromyaml._changed`), a computed value
-- is Unresolved with the reason. Literals over :data:`MAX_NODES` syntax nodes are not read.
"""

from __future__ import annotations

import ast
from typing import Any

from preflight.reading import pysig
from preflight.reading.pyvalues import Call, Unresolved

NOT_PLAIN = object()
"""The class is no plain class this module reads (a base class, no ``__init__``)."""
MAX_NODES = 20_000
"""A literal larger than this (syntax nodes) is not evaluated: a huge list is no setting."""
_BRANCHES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
             ast.Match)


def init_attr(cls: ast.ClassDef, attr: str, base: Call, line: int) -> Any:
    """``cls(...).attr`` as the ``__init__`` of ``cls`` sets it (module docstring); the value,
    Unresolved with why, or :data:`NOT_PLAIN`."""
    if cls.keywords or any(not (isinstance(b, ast.Name) and b.id == "object") for b in cls.bases):
        return NOT_PLAIN
    init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"),
                None)
    if init is None:
        return NOT_PLAIN
    positional = [*init.args.posonlyargs, *init.args.args]
    if not positional:
        return NOT_PLAIN
    me = positional[0].arg
    where = f"{attr} of {cls.name}()"
    writes: list[Any] = [n for n in ast.walk(init) if _writes(n, me, attr)]
    if not writes:
        return Unresolved(f"{where}: {cls.name}.__init__ does not set self.{attr}", line)
    if len(writes) > 1:
        return Unresolved(f"{where}: {cls.name}.__init__ sets it more than once "
                          f"(line {writes[1].lineno})", line)
    stmt = next((s for s in init.body if isinstance(s, ast.Assign) and any(
        _target(t, me, attr) for t in s.targets)), None)
    if stmt is None or len(stmt.targets) != 1 or not _target(stmt.targets[0], me, attr):
        return Unresolved(f"{where}: set at line {writes[0].lineno} in a branch, a loop or "
                          "together with other names", line)
    return _value(stmt.value, init, base, where, line)


def _target(node: ast.expr, me: str, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and \
        isinstance(node.value, ast.Name) and node.value.id == me


def _writes(node: ast.AST, me: str, attr: str) -> bool:
    """``node`` may write ``self.attr``: a store to it, or a ``setattr`` call."""
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return _target(node, me, attr)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id == "setattr"


def _value(node: ast.expr, init: ast.FunctionDef, base: Call, where: str, line: int) -> Any:
    if sum(1 for _ in ast.walk(node)) > MAX_NODES:
        return Unresolved(f"{where}: a literal too large to read", line)
    if isinstance(node, ast.Name):
        return _param(node.id, init, base, where, line)
    if isinstance(node, ast.Subscript):
        return _item(node, where, line)
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return Unresolved(f"{where}: `{ast.unparse(node)[:60]}` is computed when the script "
                          "runs", line)


def _item(node: ast.Subscript, where: str, line: int) -> Any:
    """``[...][i]`` / ``(...)[i]`` / ``{...}[k]`` of literals; Unresolved otherwise."""
    try:
        seq = ast.literal_eval(node.value)
        key = ast.literal_eval(node.slice)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return Unresolved(f"{where}: `{ast.unparse(node)[:60]}` is computed when the script "
                          "runs", line)
    if isinstance(seq, dict):
        if key not in seq:
            return Unresolved(f"{where}: the key {key!r} is not in the literal", line)
        return seq[key]
    if isinstance(seq, (list, tuple)) and isinstance(key, int) and not isinstance(key, bool):
        if 0 <= key < len(seq):
            return seq[key]
        return Unresolved(f"{where}: index {key} of a literal of {len(seq)} (negative or out of "
                          "range: which one was meant is not sure)", line)
    return Unresolved(f"{where}: `{ast.unparse(node)[:60]}` is no element of a literal", line)


def _param(name: str, init: ast.FunctionDef, base: Call, where: str, line: int) -> Any:
    """The value the call binds ``__init__``'s parameter ``name`` to."""
    a = init.args
    params = [p.arg for p in a.posonlyargs + a.args][1:]
    if name in base.kwargs:
        return base.kwargs[name]
    if name in params and params.index(name) < len(base.args):
        return base.args[params.index(name)]
    if base.star is not None:
        return Unresolved(f"{where}: a **mapping may give {name}", line)
    defaults = pysig.defaults(a)
    if name not in defaults:
        return Unresolved(f"{where}: {name} is no parameter of __init__ with a default", line)
    try:
        return ast.literal_eval(defaults[name])
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return Unresolved(f"{where}: the default of {name} is computed when the script runs",
                          line)


__all__ = ["MAX_NODES", "NOT_PLAIN", "init_attr"]
