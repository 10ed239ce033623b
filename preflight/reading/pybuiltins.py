"""Python's own builtins and comprehensions over values the text gives, for :mod:`.pysource`
(holdout12, bionemo-recipes' ESM-2 recipe at 3a9d005b, quantization.py:161-246
``resolve_layer_precision``: ``set(range(1, num_layers + 1))``, ``sorted(all_layers -
claimed)``, ``set(x) if x is not None else set()`` and a list comprehension over ``range`` give
each layer's precision, the list the model's ``get_autocast_context`` indexes).

Worked out as CPython 3.12 does, only where every input is a known plain value
(:func:`.pyguards.plain`) and the result is small (:data:`MAX_ITEMS`):

- ``range(stop)`` / ``range(start, stop[, step])`` of ints: its items as a list;
- ``set(x)`` / ``frozenset(x)`` (``set()`` empty): a :class:`frozenset`; ``a - b``, ``a & b``,
  ``a | b``, ``a ^ b`` of two sets; ``x in s`` (:mod:`.pyguards`);
- ``sorted(x[, reverse=b])`` of numbers or of strings, ``list(x)`` / ``tuple(x)`` of a list (of a
  set: its order is the hash table's, not the text's, so only when it holds one item),
  ``len(x)``, ``min`` / ``max`` of numbers;
- ``[e for v in xs if c]`` / ``{e for ...}`` with one ``for`` over a known list or set and a
  name or a tuple of names as its target: ``e`` worked out for each item, the target bound to
  it in the scope the comprehension is written in (:attr:`.pysource.Module.looped`), nothing
  else changed;
- ``xs[i]`` of a list: the item; with ``i`` not known, the item when all items are the same
  (``["fp8"] * 6`` indexed by a loop variable), else Unresolved.

Anything else is left as it was (:data:`NOTHING`: the caller goes on) or Unresolved with why.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from preflight.reading import pyenviron, pyforeign, pypretrained
from preflight.reading.pyguards import plain, truth
from preflight.reading.pyscopes import Bind
from preflight.reading.pyvalues import MAX_DEPTH, Ref, Unresolved, arith

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

MAX_ITEMS = 256
"""Items of a range, set or comprehension worked out (a model has at most a few hundred
layers); a longer one is Unresolved."""
MAX_TEXT = 65536
"""The longest string ``x += "..."`` builds; a longer one stays Unknown."""
NOTHING = object()
_SCALAR = (str, int, float, bool, type(None))


def special(module: Module, node: ast.Call, scope: Scope, depth: int, func: Any) -> Any:
    """``node`` as a builtin of known values (:func:`call`), a config a job folder holds
    (:func:`.pypretrained.pretrained`), a call of another job file's
    function (:func:`.pyforeign.foreign`) or an environment lookup or conversion
    (:func:`.pyenviron.special`); :data:`NOTHING` for any other call."""
    for follow, none in ((call, NOTHING), (pypretrained.pretrained, pypretrained.NOTHING),
                         (pyforeign.foreign, pyforeign.NOTHING),
                         (pyenviron.special, pyenviron.NOTHING)):
        got = follow(module, node, scope, depth, func)
        if got is not none:
            return got
    return NOTHING


def call(module: Module, node: ast.Call, scope: Scope, depth: int, func: Any) -> Any:
    """``node`` (whose callee is ``func``) as a builtin of known values; :data:`NOTHING` when
    it is no call of one (or its arguments are not given: a plain call record is made)."""
    if not isinstance(func, Ref) or not func.name.startswith("builtins.") or \
            any(isinstance(a, ast.Starred) for a in node.args) or len(node.args) > 3:
        return NOTHING
    name = func.name[9:]
    if name not in _FUNCS:
        return NOTHING
    if any(k.arg != "reverse" or name != "sorted" for k in node.keywords):
        return Unresolved(f"{name}() with keywords the reader does not follow", node.lineno)
    args = [module.evaluate(a, scope, depth + 1) for a in node.args]
    bad = next((a for a in args if isinstance(a, Unresolved)), None)
    if bad is not None:
        return bad
    kwargs = {k.arg: module.evaluate(k.value, scope, depth + 1) for k in node.keywords}
    try:
        got = _FUNCS[name](args, kwargs)
    except (TypeError, ValueError, OverflowError):
        got = None
    return got if got is not None else Unresolved(
        f"{name}() of a value computed when the script runs", node.lineno)


def _range(args: list[Any], _kw: dict[str, Any]) -> list[int] | None:
    if not 1 <= len(args) <= 3 or not all(type(a) is int for a in args):
        return None
    got = range(*args)
    return list(got) if len(got) <= MAX_ITEMS else None


def _items(value: Any) -> list[Any] | frozenset[Any] | None:
    """The items iterating ``value`` gives, when the text gives them all."""
    if isinstance(value, dict):
        value = list(value)
    if isinstance(value, str) and len(value) <= MAX_ITEMS:
        return list(value)
    if isinstance(value, (list, frozenset)) and len(value) <= MAX_ITEMS and plain(value):
        return value
    return None


def _set(args: list[Any], _kw: dict[str, Any]) -> frozenset[Any] | None:
    if not args:
        return frozenset()
    items = _items(args[0]) if len(args) == 1 else None
    if items is None or not all(isinstance(i, _SCALAR) for i in items):
        return None
    return frozenset(items)


def _sorted(args: list[Any], kw: dict[str, Any]) -> list[Any] | None:
    items = _items(args[0]) if len(args) == 1 else None
    reverse = kw.get("reverse", False)
    if items is None or not isinstance(reverse, bool) or not (
            all(isinstance(i, (int, float)) for i in items) or
            all(isinstance(i, str) for i in items)):
        return None
    return sorted(items, reverse=reverse)


def _list(args: list[Any], _kw: dict[str, Any]) -> list[Any] | None:
    if not args:
        return []
    items = _items(args[0]) if len(args) == 1 else None
    if isinstance(items, frozenset):
        return list(items) if len(items) <= 1 else None    # a set's order is not the text's
    return None if items is None else list(items)


def _len(args: list[Any], _kw: dict[str, Any]) -> int | None:
    if len(args) == 1 and isinstance(args[0], (list, dict, str, frozenset)):
        return len(args[0])
    return None


def _extreme(pick: Any) -> Any:
    def run(args: list[Any], _kw: dict[str, Any]) -> Any:
        items = _items(args[0]) if len(args) == 1 else args
        if not items or not all(isinstance(i, (int, float)) for i in items):
            return None
        return pick(items)
    return run


_FUNCS: dict[str, Any] = {
    "range": _range, "set": _set, "frozenset": _set, "sorted": _sorted, "list": _list,
    "tuple": _list, "len": _len, "min": _extreme(min), "max": _extreme(max)}


def set_of(items: list[Any]) -> Any:
    """A set literal ``{a, b}``: a :class:`frozenset` of its items when they are all known
    scalars, else the items as a list (as before: their membership is still known)."""
    return frozenset(items) if all(isinstance(i, _SCALAR) for i in items) else items


def binop(op: ast.operator, left: Any, right: Any, line: int | None) -> Any:
    """``left op right``: set algebra of two known sets, else :func:`.pyvalues.arith`."""
    if isinstance(left, frozenset) and isinstance(right, frozenset):
        ops = {ast.Sub: frozenset.__sub__, ast.BitAnd: frozenset.__and__,
               ast.BitOr: frozenset.__or__, ast.BitXor: frozenset.__xor__}
        for kind, run in ops.items():
            if isinstance(op, kind):
                got = run(left, right)
                return got if len(got) <= MAX_ITEMS else Unresolved(
                    f"a set of more than {MAX_ITEMS} items", line)
    if isinstance(op, ast.Mult) and isinstance(left, list) and type(right) is int and \
            0 <= len(left) * right <= MAX_ITEMS and plain(left):
        return left * right             # ["fp8"] * config.num_hidden_layers
    return arith(op, left, right, line)


def item(base: list[Any], key: Any, line: int) -> Any:
    """``base[key]`` of a known list: the item; any item when they are all the same."""
    if type(key) is int and -len(base) <= key < len(base):
        return base[key]
    if isinstance(key, Unresolved) and base and plain(base) and \
            all(type(v) is type(base[0]) and v == base[0] for v in base[1:]):
        return base[0]          # whichever index: the script stops at IndexError otherwise
    return key if isinstance(key, Unresolved) else Unresolved(
        "an item of a list at an index the text does not give", line)


def comprehension(module: Module, node: ast.expr, scope: Scope, depth: int) -> Any:
    """A list or set comprehension (module docstring); :data:`NOTHING` for another expression."""
    if not isinstance(node, (ast.ListComp, ast.SetComp)):
        return NOTHING
    line = node.lineno
    if len(node.generators) != 1 or node.generators[0].is_async:
        return Unresolved("a comprehension with more than one for", line)
    gen = node.generators[0]
    names = _targets(gen.target)
    source = module.evaluate(gen.iter, scope, depth + 1)
    items = _items(source)
    if names is None or items is None or (isinstance(items, frozenset) and
                                          isinstance(node, ast.ListComp) and len(items) > 1):
        return source if isinstance(source, Unresolved) else Unresolved(
            "a comprehension over values computed when the script runs", line)
    out: list[Any] = []
    for value in items:
        bound = _unpack(names, value)
        if bound is None:
            return Unresolved("a comprehension whose items do not unpack", line)
        with looped(module, scope, bound):
            tests = [truth(module.evaluate(c, scope, depth + 1)) for c in gen.ifs]
            if None in tests:
                return Unresolved("a comprehension filtered by a condition computed when the "
                                  "script runs", line)
            if all(tests):
                out.append(module.evaluate(node.elt, scope, depth + 1))
    if isinstance(node, ast.SetComp):
        return frozenset(out) if all(isinstance(v, _SCALAR) for v in out) else Unresolved(
            "a set of values computed when the script runs", line)
    return out


def _targets(target: ast.expr) -> list[str] | str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts if isinstance(e, ast.Name)]
    return None


def _unpack(names: list[str] | str, value: Any) -> dict[str, Any] | None:
    if isinstance(names, str):
        return {names: value}
    if isinstance(value, list) and len(value) == len(names):
        return dict(zip(names, value))
    return None


@contextmanager
def looped(module: Module, scope: Scope, bound: dict[str, Any]) -> Iterator[None]:
    """While a comprehension's item is worked out: its target names bound in ``scope``."""
    table = module.looped_names
    saved = {name: table.get((id(scope), name), NOTHING) for name in bound}
    table.update(((id(scope), name), value) for name, value in bound.items())
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is NOTHING:
                table.pop((id(scope), name), None)
            else:
                table[(id(scope), name)] = value


def grown(module: Module, name: str, binds: list[Bind], scope: Scope, bind: Bind,
          depth: int) -> Any:
    """``name += "text"`` where both sides are known strings (thunder's
    ``compile_options += "_transformerengine"``); anything else stays Unknown with the
    reason. ``|=`` of two strings would raise, so two strings mean concatenation."""
    earlier = module._reaching(name, binds, scope, bind.line, depth)
    if depth > MAX_DEPTH or (isinstance(earlier, Bind) and earlier.line >= bind.line):
        # nothing earlier in this scope (`global n` ... `n += 1`, a loop): it grows an
        # unknown number of times from a value this scope does not set (eval16: recursion)
        return Unresolved(bind.why, bind.line)
    before = module._bound(name, binds, scope, bind.line, depth + 1)
    added = module.evaluate(bind.aug, scope, depth + 1) if bind.aug is not None else None
    if isinstance(before, str) and isinstance(added, str) and \
            len(before) + len(added) <= MAX_TEXT:
        return before + added
    return Unresolved(bind.why, bind.line)
