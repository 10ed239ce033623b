"""A module-level object shared between the job's Python files: its attributes as the entry
script sets them before it calls into the module that defines it (holdout14, session 37).

TE's official te_llama tutorial (NVIDIA/TransformerEngine d0067d0d,
docs/examples/te_llama/run_fp8.py) does ``from utils import *``, then ``hyperparams.
mixed_precision = "fp8"`` on the ``hyperparams = HyperParameters()`` utils.py binds at its top
(utils.py:47), then calls ``wrap_with_accelerator(model, hyperparams)``, which builds
``Accelerator(mixed_precision=hyperparams.mixed_precision, kwargs_handlers=[FP8RecipeKwargs(
backend="te")] if hyperparams.mixed_precision == "fp8" else None)``. Python shares one object:
what the script sets on it before a call is what the module's function reads, whether the
function takes it as a parameter or reads its own global. Read, never run:

- :func:`imported`: a name the file imports from a job module (``from m import *``, ``from m
  import obj``) is the module's top-level value with the ``obj.a.b = v`` / ``obj["k"] = v``
  statements of the file applied in statement order: in the scope of the use only those before
  it (a set after the call does not count), those of the file's top level all when used in a
  function (it runs after them); a set under a condition the text does not decide makes that
  attribute Unresolved (:func:`.pycallers.apply_sets`);
- :func:`member`: ``m.obj`` after ``import m`` likewise, with the ``m.obj.a = v`` statements;
- :func:`at_calls`: the values such names have at each call the file makes into the module,
  merged attribute by attribute (:func:`merged`: one that differs between calls is Unresolved
  naming their lines), kept as the module's :attr:`.pysource.Module.shared`, which its
  functions see for their global (``hyperparams.mixed_precision`` in a function of utils.py
  that takes no parameter);
- :func:`default`: ``obj.attr`` of an instance of the module's own class that nothing sets is
  what its ``__init__`` sets (``self.mixed_precision = "bf16"``), unless code of the module
  other than ``__init__`` assigns an attribute of that name or calls ``setattr`` (then
  Unresolved, naming the line).
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Any

from preflight.reading.pymodfile import module_file
from preflight.reading.pyvalues import Call, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

MAX_SHARED = 32
"""Names one file shares with one module (each evaluated at each call into it)."""
MAX_CALLS = 32
"""Calls into one module whose state is compared."""
MAX_ITEMS = 256
"""``obj[k] = v`` / ``obj.k = v`` statements applied to one value."""


def _apply(module: Module, value: Any, scope: Scope, name: str, before: int | None,
           depth: int, prefix: tuple[str, ...] = ()) -> Any:
    """``value`` with ``scope``'s sets of ``name`` (under ``prefix``) made before ``before``."""
    from preflight.reading.pycallers import apply_sets
    if isinstance(value, Call):
        return apply_sets(module, value, scope, name, depth, before=before, prefix=prefix)
    if not isinstance(value, dict) or prefix:
        return value
    out = dict(value)
    for key, item, line, guards in scope.items.get(name, ())[:MAX_ITEMS]:
        if before is not None and line >= before and not any(g.loop for g in guards):
            continue
        state = module.runs(guards, scope, depth=depth) if guards else True
        if state is False:
            continue
        got = module.evaluate(key, scope, depth + 1)
        if not isinstance(got, str):
            return Unresolved(f"{name}[...] is set at line {line} with a key computed when "
                              "the script runs", line)
        out[got] = module.evaluate(item, scope, depth + 1) if state is True else \
            Unresolved(f"{name}[{got!r}] is {state.reason}", line)
    return out


def _applied(module: Module, value: Any, scope: Scope, name: str, line: int | None,
             depth: int, prefix: tuple[str, ...] = ()) -> Any:
    """The file's top-level sets, then those of the function the use is in (before it)."""
    top = module.module
    value = _apply(module, value, top, name, line if scope is top else None, depth, prefix)
    if scope is not top:
        value = _apply(module, value, scope, name, line, depth, prefix)
    return value


def imported(module: Module, name: str, scope: Scope, line: int | None, depth: int) -> Any:
    """``name``, imported from ``module.imports[name]``, at ``line`` of ``scope``."""
    return _applied(module, module.ref(module.imports[name]), scope, name, line, depth)


def member(module: Module, root: str, attr: str, value: Any, scope: Scope,
           line: int | None, depth: int) -> Any:
    """``root.attr`` (``value``) where ``root`` is a job module imported with ``import``."""
    if not isinstance(value, (Call, dict)) or root in scope.binds or \
            root in module.module.binds:
        return value
    return _applied(module, value, scope, root, line, depth, (attr,))


def shares(importer: Module, path: str) -> list[tuple[str, str | None]]:
    """(name, attr) the importer takes from the module at ``path`` and changes: ``from m
    import obj`` / ``*`` -> ``(obj, None)``; ``import m`` with ``m.obj.x = v`` -> ``(m, obj)``."""
    real = os.path.realpath(path)
    changed: dict[str, set[str | None]] = {}
    for scope in importer.scopes:
        for name, sets in scope.sets.items():
            changed.setdefault(name, set()).update(p[0] if len(p) > 1 else None
                                                   for p, *_ in sets[:MAX_ITEMS])
        for name in scope.items:
            changed.setdefault(name, set()).add(None)
    out: list[tuple[str, str | None]] = []
    for name, attrs in changed.items():
        qualified = importer.imports.get(name)
        if qualified is None:
            continue
        owner, _, _attr = qualified.rpartition(".")
        for base, attr in ((owner, None), (qualified, "")):
            found = module_file(base, importer.path) if base else None
            if found is None or os.path.realpath(found) != real:
                continue
            if attr is None:
                out.append((name, None))
            else:
                out.extend((name, a) for a in sorted(a for a in attrs if a is not None))
    return out


def at_calls(importer: Module, path: str) -> dict[str, Any]:
    """The module's top-level names as ``importer`` leaves them at each of its calls into the
    module at ``path`` (merged: :func:`merged`), for the names it changes."""
    changed = shares(importer, path)
    if not changed:
        return {}
    real = os.path.realpath(path)
    sites: list[tuple[int, Scope]] = []
    for call, scope in importer.calls():
        owner = call.func.rpartition(".")[0]
        found = module_file(owner, importer.path) if owner and \
            not call.func.startswith("__main__.") else None
        if found is not None and os.path.realpath(found) == real:  # (conditional ones too)
            sites.append((call.line, scope))
    out: dict[str, Any] = {}
    for name, attr in changed[MAX_SHARED:]:    # past the bound: not followed, never the default
        out[attr or name] = Unresolved(f"{attr or name} is one of more than {MAX_SHARED} names "
                                       f"{os.path.basename(importer.path)} changes in "
                                       f"{os.path.basename(path)}: not followed")
    for name, attr in changed[:MAX_SHARED]:
        values = []
        for line, scope in sites[:MAX_CALLS]:
            node: ast.expr = ast.Name(id=name, ctx=ast.Load(), lineno=line, col_offset=0)
            if attr is not None:
                node = ast.Attribute(value=node, attr=attr, ctx=ast.Load(), lineno=line,
                                     col_offset=0)
            values.append((line, importer.evaluate(node, scope, 1)))
        if values:
            out[attr or name] = merged(values)
    return out


def merged(values: list[tuple[int, Any]]) -> Any:
    """One value from those at several calls: alike, that value; two calls (or two mappings)
    of the same function, key by key; else Unresolved naming the lines."""
    first = values[0][1]
    if all(_alike(first, v) for _, v in values[1:]):
        return first
    if all(isinstance(v, Call) and v.func == first.func for _, v in values) or \
            all(isinstance(v, dict) for _, v in values):
        keys = dict.fromkeys(k for _, v in values
                             for k in (v.kwargs if isinstance(v, Call) else v))
        out = {}
        for key in list(keys)[:MAX_ITEMS]:
            got = [(line, (v.kwargs if isinstance(v, Call) else v).get(key, _ABSENT))
                   for line, v in values]
            out[key] = got[0][1] if all(_alike(got[0][1], g) for _, g in got[1:]) else \
                Unresolved(f"{key} differs between the calls at lines "
                           f"{', '.join(str(line) for line, _ in got[:6])}", got[0][0])
        out = {k: v for k, v in out.items() if v is not _ABSENT}
        if isinstance(first, Call):
            from dataclasses import replace
            return replace(first, kwargs=out)
        return out
    return Unresolved("differs between the calls at lines " +
                      ", ".join(str(line) for line, _ in values[:6]), values[0][0])


_ABSENT = object()


def _alike(a: Any, b: Any) -> bool:
    from preflight.reading.pycallers import _same
    return a is b if _ABSENT in (a, b) else _same(a, b)


def default(module: Module, base: Call, attr: str, depth: int) -> Any:
    """``base.attr`` where ``base`` makes an instance of the module's own class and no keyword
    or set gives ``attr``: what ``__init__`` sets (module docstring); :data:`.pyprops.NOT_SET`
    when not that case."""
    from preflight.reading.pycallers import instance_attr
    from preflight.reading.pyprops import NOT_SET
    cls = base.func[9:] if base.func.startswith("__main__.") else None
    if cls is None or cls not in module.classes or (base.path is not None and
                                                    os.path.realpath(base.path) !=
                                                    os.path.realpath(module.path)):
        return NOT_SET
    seen = module.__dict__.setdefault("_shared_set", {})
    if (cls, attr) not in seen:
        seen[(cls, attr)] = _set_elsewhere(module, cls, attr)
    return seen[(cls, attr)] or instance_attr(module, cls, attr, depth + 1)


def _applied_sets(module: Module, cls: str, attr: str) -> set[int]:
    """Lines of ``name.attr = v`` where the scope of the statement binds ``name`` only to calls
    of ``cls`` (``config = TrainingConfig()`` ... ``if args.no_fp8: config.use_fp8 = False``,
    holdout18 yxanul): :func:`.pycallers.apply_sets` applies those (with their conditions) to
    the value wherever that name is read, so they are no set out of the reader's sight."""
    lines: set[int] = set()
    for scope in module.scopes:
        for name, sets in scope.sets.items():
            binds = scope.binds.get(name, ())
            if binds and all(isinstance(b.value, ast.Call) and isinstance(b.value.func, ast.Name)
                             and b.value.func.id == cls for b in binds):
                lines.update(line for path, _, line, _ in sets[:MAX_ITEMS] if path == (attr,))
    return lines


def _set_elsewhere(module: Module, cls: str, attr: str) -> Unresolved | None:
    """An assignment of ``.attr`` (or a ``setattr``) in the module outside ``cls.__init__``."""
    init = module.methods.get((cls, "__init__"))
    span = (init.node.lineno, init.node.end_lineno or init.node.lineno) \
        if init is not None and init.node is not None else (0, -1)
    applied = _applied_sets(module, cls, attr)
    for where in [w for w in _stores(module).get(attr, []) if w not in applied] + \
            _stores(module).get("", []):
        if not span[0] <= where <= span[1]:
            return Unresolved(f"{attr} of {cls}() may be set at {os.path.basename(module.path)}"
                              f" line {where}", where)
    return None


def _reflective(node: ast.AST) -> bool:
    """A store that may change any attribute: ``setattr(...)`` / ``delattr(...)``, and a write
    into an object's namespace, ``vars(x).update(...)``, ``x.__dict__[k] = v``,
    ``x.__dict__.update(...)`` (redteam11: the same forms make a shared object Unknown in
    pyscopes; a plain ``vars(args)`` read is no store)."""
    def namespace(value: ast.AST) -> bool:
        return (isinstance(value, ast.Attribute) and value.attr == "__dict__") or (
            isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id == "vars")
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("setattr", "delattr"):
            return True
        return (isinstance(func, ast.Attribute) and func.attr in ("update", "setdefault",
                                                                   "__setitem__", "pop")
                and namespace(func.value))
    return (isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del))
            and namespace(node.value))


def _stores(module: Module) -> dict[str, list[int]]:
    """The lines of each ``x.attr = ...`` by attribute (``""``: each store that may change any
    attribute, :func:`_reflective`), in file order; worked out once per file (a 1,900-line
    script asked it for 19 attributes)."""
    if "_attr_stores" not in module.__dict__:
        out: dict[str, list[int]] = {}
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                out.setdefault(node.attr, []).append(node.lineno)
            elif isinstance(node, (ast.Call, ast.Subscript)) and _reflective(node):
                out.setdefault("", []).append(node.lineno)
        module.__dict__["_attr_stores"] = {k: sorted(v) for k, v in out.items()}
    return module.__dict__["_attr_stores"]   # type: ignore[no-any-return]
