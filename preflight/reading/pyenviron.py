"""Environment lookups in a Python job file, resolved as the process that runs it sees them
(issue 22, holdout10: ``recipe = os.environ.get("RECIPE", "fp8")`` under ``RECIPE=fp8 torchrun
02_main.py`` left the NeMo 2 tutorial's FP8 branch undecided).

A script reads a switch from the environment in many ways: ``os.environ.get(X, d)``,
``os.getenv(X, d)``, ``os.environ[X]``, ``os.environ.setdefault(X, d)``, ``environ.get`` after
``from os import environ``, ``import os as _os``, then ``int(...)``, ``.lower() == "1"``,
``strtobool(...)``. Which ``os`` it is comes from the file's imports (:mod:`.pyscopes`), so a
local ``os`` that is not the module, or a name only a comment or string holds, reads nothing.
The value, as :attr:`.pysource.Module.environ` holds what the launch lines that run the file give
its process (:func:`.launchenv.process_env`, merged per file by :mod:`preflight.jobs.scripts`):

- set on the launch line (a ``X=v`` prefix, an ``export`` before it, ``env X=v``, what a calling
  script passes): that value, its fact's provenance the launch line;
- not set there: the default, its provenance the lookup's line marked ``environment X, unset on
  the launch line: the default`` (``os.environ[X]``: Unresolved, the script needs it from the
  shell); a name the launcher on that line sets itself (torchrun's ``LOCAL_RANK``, srun's
  ``SLURM_*``, accelerate launch's ``ACCELERATE_*``) is Unresolved, never the default;
- set to what only the run knows (``export X=$1``), or differently by two launch lines of the
  file: Unresolved with that reason;
- no launch line that runs the file was read (a script run by hand): Unresolved, saying so.

A variable the script sets itself (``os.environ[X] = ...``, ``setdefault``, ``pop``, ``update``,
``putenv``, ``load_dotenv()`` under any alias, ``os.environ |= ...``, ``os.environ = ...``,
``os.getenv = ...``, ``setattr(os, ...)``, ``exec``) before a lookup may change what it reads: one
plain, unconditional module-level assignment of a literal is followed, anything else (or a write
past :data:`MAX_WRITES`) leaves the lookup Unresolved.
Nothing is imported or run.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from preflight.findings import Source
from preflight.reading.pyvalues import Call, Ref, Unresolved
from preflight.reading.shellvars import runtime_reason

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

Environ = Mapping[str, tuple[str, str]]
"""Name -> (value or a :func:`.shellvars.runtime` marker, where the launch line gives it)."""

GETTERS = frozenset({"os.environ.get", "os.getenv", "os.environ.setdefault",
                     "posix.environ.get", "posix.getenv"})
_WRITERS = frozenset({"setdefault", "pop", "update", "clear", "popitem", "putenv", "unsetenv",
                      "__setitem__", "__delitem__", "__ior__"})
MAX_WRITES = 64
"""Writes of the environment noted per file; past them, any variable may be changed."""
_STRTOBOOL = ("strtobool", "str2bool", "str_to_bool")
NOTHING = object()
""":func:`special`: the call is none of those read here."""


class EnvStr(str):
    """A string a lookup read from the environment, with where it comes from (a fact's
    provenance: the launch line, or the lookup's line marked as the default)."""

    where: Source

    def __new__(cls, value: str, where: Source) -> EnvStr:
        obj = super().__new__(cls, value)
        obj.where = where
        return obj


class Noted(Source):
    """A ``path:line`` provenance with a note (``environment X, unset on the launch line: the
    default``); ``path`` and ``line`` stay values, as :class:`.findings.Source` keeps them."""

    def __new__(cls, path: str, line: int | None, note: str) -> Noted:
        obj = str.__new__(cls, f"{path}:{line} ({note})" if line else f"{path} ({note})")
        obj.path, obj.line = path, line
        return obj


def bound(base: str, attr: str, line: int) -> Any:
    """``"text".lower`` (a method of a known string, :meth:`.pysource.Module._attribute`): a
    marker :func:`special` calls, else Unresolved."""
    if attr in _STR_METHODS:
        return Call(f"{_BOUND}{attr}", line, (base,))
    return Unresolved(f".{attr} of a string, computed when the script runs", line)


_BOUND = "@str."


def special(module: Module, node: ast.Call, scope: Scope, depth: int, callee: Any) -> Any:
    """The value of ``node`` (whose callee evaluated to ``callee``) when it is an environment
    lookup, a string method or a conversion of a known value (``os.getenv("FP8", "0").lower()``,
    ``int(os.environ.get(...))``, ``strtobool(...)``); :data:`NOTHING` for any other call
    (:meth:`.pysource.Module._call` goes on)."""
    if isinstance(callee, Call) and callee.func.startswith(_BOUND):
        args = [module.evaluate(a, scope, depth + 1) for a in node.args[:2]]
        if node.keywords or len(node.args) > 1 or not all(isinstance(a, str) for a in args):
            return Unresolved(f"{callee.func[len(_BOUND):]}() with arguments computed when the "
                              "script runs", node.lineno)
        return _STR_METHODS[callee.func[len(_BOUND):]](callee.args[0], *args)
    if isinstance(callee, Unresolved) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in _STR_METHODS:
        return callee           # `os.getenv("X", "0").lower()` where X is not known
    if not isinstance(callee, Ref):
        return NOTHING
    if callee.name in GETTERS:
        if _shadowed(module, node.func):
            return Unresolved(f"{_root(node.func)} is also defined in this file: which one the "
                              f"lookup at line {node.lineno} uses depends on the order the code "
                              "runs", node.lineno)
        return _get(module, node, scope, depth, callee.name)
    if callee.name in ("builtins.int", "builtins.float", "builtins.bool") and \
            len(node.args) == 1 and not node.keywords:
        return _convert(callee.name[9:], module.evaluate(node.args[0], scope, depth + 1),
                        node.lineno)
    if callee.last in _STRTOBOOL and len(node.args) == 1 and not node.keywords:
        value = module.evaluate(node.args[0], scope, depth + 1)
        if isinstance(value, str) and value.lower() in _TRUE + _FALSE:
            # distutils.util.strtobool (and the copies in transformers / setuptools): 1 or 0
            return int(value.lower() in _TRUE)
    return NOTHING


_STR_METHODS: dict[str, Any] = {
    "lower": str.lower, "upper": str.upper, "strip": str.strip, "lstrip": str.lstrip,
    "rstrip": str.rstrip, "casefold": str.casefold, "title": str.title,
    "startswith": str.startswith, "endswith": str.endswith}
_TRUE = ("y", "yes", "t", "true", "on", "1")
_FALSE = ("n", "no", "f", "false", "off", "0")


def _convert(kind: str, value: Any, line: int) -> Any:
    if isinstance(value, Unresolved):
        return value
    if kind == "bool":
        return bool(value) if isinstance(value, (str, int, float, bool)) else Unresolved(
            "bool() of a value computed when the script runs", line)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        try:
            got = int(value) if kind == "int" else float(value)
            return got if abs(got) < 2 ** 63 else Unresolved("not a plausible number", line)
        except (ValueError, OverflowError):
            return Unresolved(f"{kind}({str(value)[:40]!r}) fails when the script runs", line)
    return Unresolved(f"{kind}() of a value computed when the script runs", line)


def _get(module: Module, node: ast.Call, scope: Scope, depth: int, func: str) -> Any:
    if not node.args or len(node.args) > 2 or node.keywords:
        return Unresolved(f"{func}() with arguments the text does not follow", node.lineno)
    name = module.evaluate(node.args[0], scope, depth + 1)
    if len(node.args) == 2:
        return lookup(module, name, scope, node.lineno,
                      default=module.evaluate(node.args[1], scope, depth + 1))
    return lookup(module, name, scope, node.lineno, default=None)


def subscript(module: Module, node: ast.Subscript, scope: Scope, depth: int) -> Any:
    """``os.environ["X"]`` (no default: the script stops with KeyError without it); any other
    subscript stays Unresolved."""
    base = module.evaluate(node.value, scope, depth + 1)
    if isinstance(base, Ref) and base.name in ("os.environ", "posix.environ") and \
            _shadowed(module, node.value):
        return Unresolved(f"{_root(node.value)} is also defined in this file", node.lineno)
    if isinstance(base, Ref) and base.name in ("os.environ", "posix.environ"):
        key = module.evaluate(node.slice, scope, depth + 1)
        return lookup(module, key, scope, node.lineno, default=NOTHING)
    if isinstance(base, dict) and isinstance(key := module.evaluate(node.slice, scope, depth + 1),
                                             str) and key in base:
        return base[key]
    if isinstance(base, list) and not isinstance(node.slice, ast.Slice):   # xs[i]
        from preflight.reading.pybuiltins import item  # (it imports this module)
        return item(base, module.evaluate(node.slice, scope, depth + 1), node.lineno)
    if isinstance(base, Ref) and base.name.endswith("common.recipe.Format") and \
            isinstance(key := module.evaluate(node.slice, scope, depth + 1), str) and \
            key.isidentifier():     # TE's Format is an Enum: Format["HYBRID"] is Format.HYBRID
        return Ref(f"{base.name}.{key}")
    return base if isinstance(base, Unresolved) else \
        Unresolved("an item of a value computed when the script runs", node.lineno)


def lookup(module: Module, name: Any, scope: Scope, line: int, default: Any) -> Any:
    """What the process reads for ``name`` (module docstring); ``default`` :data:`NOTHING` for
    ``os.environ[name]``."""
    if not isinstance(name, str):
        return name if isinstance(name, Unresolved) else Unresolved(
            "an environment variable whose name is computed when the script runs", line)
    written = _written(module, name, scope, line)
    if written is not None:
        return written
    shown = "" if default is NOTHING else f" (default {_short(default)})"
    environ: Environ | None = module.environ
    if environ is None:
        return Unresolved(f"{name} is read from the environment at line {line}{shown}; no "
                          "launch line that runs this file was read, so its value is that of "
                          "the shell that runs it", line)
    star = next((k for k in environ if k.endswith("*") and name.startswith(k[:-1])), None)
    if name in environ or star is not None:
        value, where = environ[name] if name in environ else environ[star or "*"]
        why = runtime_reason(value)
        if why is not None:
            return Unresolved(f"{name} (read at line {line}): {why}", line)
        return EnvStr(value, where if isinstance(where, Source) else Source(where))
    if default is NOTHING:
        return Unresolved(f"os.environ[{name!r}] at line {line}: {name} is not set on any "
                          "launch line read (the script stops with KeyError unless the shell "
                          "that runs it sets it)", line)
    if isinstance(default, str):
        return EnvStr(default, Noted(module.path, line,
                                     f"environment {name}, unset on the launch line: the "
                                     "default"))
    return default


def _root(node: ast.expr) -> str:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def _shadowed(module: Module, node: ast.expr) -> bool:
    """``os.environ.get`` where the file also defines a class or function ``os`` at its top
    (redteam7: ``class os: environ = {...}`` after ``import os`` was read as the module; which
    binding a use sees is the order the code runs, which the layout does not keep)."""
    name = _root(node)
    return bool(name) and (name in module.classes or name in module.functions)


def _short(value: Any) -> str:
    text = repr(value) if isinstance(value, (str, int, float, bool, type(None))) else "computed"
    return text if len(text) <= 40 else text[:37] + "..."


Write = tuple[str | None, int, int, Any, str]
_WRITES: weakref.WeakKeyDictionary[Module, list[Write]] = weakref.WeakKeyDictionary()


def _written(module: Module, name: str, scope: Scope, line: int) -> Any:
    """None when the script does not change ``name`` before the lookup at ``line`` (in
    ``scope``), else what the lookup reads: a plain module-level ``os.environ[name] = "v"``
    before it, or Unresolved naming the write."""
    if module not in _WRITES:
        _WRITES[module] = _writes(module)
    inside = scope is not module.module
    known = module.environ is not None and name in module.environ and \
        runtime_reason(module.environ[name][0]) is None
    # `setdefault` leaves a value the launch line gives as it is
    hits = [w for w in _WRITES[module] if w[0] in (name, None) and (inside or w[1] < line)
            and not (known and w[4] == "setdefault")]
    if not hits:
        return None
    key, _, at, value, _ = hits[-1]
    if len(hits) == 1 and key == name and isinstance(value, str) and not inside:
        # `os.environ["X"] = "1"` at the top of the script, before the lookup
        return EnvStr(value, Noted(module.path, at, f"environment {name}, set by the script"))
    what = f"{name} is" if key == name else "the environment is"
    return Unresolved(f"{what} changed by the script itself at line {at} before it is read at "
                      f"line {line}: which value the lookup sees depends on the order the code "
                      "runs", line)


def _writes(module: Module) -> list[Write]:
    """``(name or None for any, the line of the top-level statement it is in, its own line,
    the literal value of a plain module-level assignment or None, how)`` for each write of the
    environment in the file, in order."""
    out: list[Write] = []
    for top in module.tree.body:
        plain = isinstance(top, ast.Assign) and len(top.targets) == 1
        for node in ast.walk(top):
            if len(out) >= MAX_WRITES:
                # redteam7: a write past the bound changes any variable, never none
                out.append((None, top.lineno, getattr(node, "lineno", top.lineno), None, "more"))
                return out
            target: ast.expr | None = None
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                for t in (node.targets if isinstance(node, (ast.Assign, ast.Delete))
                          else [node.target]):
                    if isinstance(t, ast.Subscript) and _is_environ(module, t.value):
                        target = t
                    elif _rebinds(module, t, isinstance(node, ast.AugAssign)):
                        # `os.environ |= {...}`, `os.environ = {...}`, `os.getenv = ...`
                        out.append((None, top.lineno, node.lineno, None, "rebind"))
            elif isinstance(node, ast.Call) and _dynamic(module, node):
                # `setattr(os, "environ", ...)`, `exec("os.environ[...] = ...")` (redteam7)
                out.append((None, top.lineno, node.lineno, None, "dynamic"))
            elif isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr in _WRITERS and (
                        _is_environ(module, func.value) or (
                            func.attr in ("putenv", "unsetenv") and
                            _ref(module, func.value) in ("os", "posix"))):
                    keys = _keys(module, top, node.args[0]) if node.args and \
                        func.attr != "update" else [None]
                    out.extend((key, top.lineno, node.lineno, None, func.attr) for key in keys)
                elif (func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                      ) == "load_dotenv" or str(_static(module, func)).endswith(
                          ".load_dotenv"):
                    # python-dotenv: the .env file's variables (under any alias: redteam7)
                    out.append((None, top.lineno, node.lineno, None, "load_dotenv"))
            if target is not None:
                assert isinstance(target, ast.Subscript)
                value = top.value if plain and top is node and isinstance(top, ast.Assign) \
                    and isinstance(top.value, ast.Constant) else None
                out.append((_key(module, target.slice), top.lineno, target.lineno,
                            value.value if value is not None else None, "set"))
    return out


def _ref(module: Module, node: ast.expr) -> str | None:
    value = module.evaluate(node, module.module, 1)
    return value.name if isinstance(value, Ref) else None


def _is_environ(module: Module, node: ast.expr) -> bool:
    return _ref(module, node) in ("os.environ", "posix.environ")


def _static(module: Module, node: ast.expr) -> str | None:
    """The imported name ``node`` spells (``os``, ``os.environ``, ``ld`` from ``from dotenv
    import load_dotenv as ld``), without evaluating anything (a lookup evaluated here would
    ask for this file's writes again)."""
    if isinstance(node, ast.Name):
        return module.imports.get(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            node.value.id in module.imports:
        return f"{module.imports[node.value.id]}.{node.attr}"
    return None


_OS = ("os", "posix", "os.environ", "posix.environ")


def _rebinds(module: Module, target: ast.expr, augmented: bool) -> bool:
    """``os.environ |= {...}`` (in place), or an assignment to ``os.environ`` itself or to an
    attribute of ``os`` (``os.getenv = ...``)."""
    name = _static(module, target)
    if augmented and name in _OS[2:]:
        return True
    return isinstance(target, ast.Attribute) and (
        name in _OS[2:] or _static(module, target.value) in _OS[:2])


def _dynamic(module: Module, node: ast.Call) -> bool:
    """``exec(...)`` / ``setattr(os, ...)``: code or attributes the text does not show (the
    builtins, unless the file binds the name)."""
    func = node.func.id if isinstance(node.func, ast.Name) and \
        node.func.id not in module.imports and node.func.id not in module.module.binds and \
        node.func.id not in module.functions else None
    return func == "exec" or (
        func == "setattr" and bool(node.args) and _static(module, node.args[0]) in _OS)


def _keys(module: Module, top: ast.stmt, node: ast.expr) -> list[str | None]:
    """The names a write's key may be: a literal, or the loop variable of a ``for`` over
    literals (slime's tests: ``for proxy_var in ("http_proxy", ...): os.environ.pop(...)``);
    ``[None]``: any."""
    key = _key(module, node)
    if key is not None or not isinstance(node, ast.Name):
        return [key]
    for loop in ast.walk(top):
        if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and \
                loop.target.id == node.id and isinstance(loop.iter, (ast.Tuple, ast.List)) and \
                all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                    for e in loop.iter.elts[:64]):
            return [str(e.value) for e in loop.iter.elts[:64] if isinstance(e, ast.Constant)]
    return [None]


def _key(module: Module, node: ast.expr) -> str | None:
    key = module.evaluate(node, module.module, 1)
    return key if isinstance(key, str) else None


__all__ = ["GETTERS", "NOTHING", "EnvStr", "Environ", "Noted", "bound", "lookup", "special",
           "subscript"]
