"""A function's parameter defaults as written (``def f(a, b=1, *, c=2)``), read from its syntax
tree: the one place that lines ``args.defaults`` up with the positional parameters they belong
to (the last ones: Python's rule, "Function definitions" in the language reference) and pairs
keyword-only parameters with ``kw_defaults`` (None there: no default)."""

from __future__ import annotations

import ast
from typing import Any

from preflight.reading.pyvalues import Unresolved


def defaults(args: ast.arguments) -> dict[str, ast.expr]:
    """Each parameter with a default: its name -> the default's expression (not evaluated)."""
    positional = [*args.posonlyargs, *args.args]
    out = {a.arg: d for a, d in zip(positional[len(positional) - len(args.defaults):],
                                    args.defaults)}
    out.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return out


def misfit(fn: ast.AST | None, node: ast.Call, skip: int = 0) -> str | None:
    """Why Python raises TypeError binding the call ``node`` to the function ``fn`` (its first
    ``skip`` parameters given otherwise: a method's ``self``), None when it binds or the text
    does not tell: a decorated function (the decorator may take any signature: ``@hydra.main``
    calls ``main()`` with its config), ``*args`` / ``**kw`` on either side, a partial.
    Python's rules: "Calls" in the language reference (a positional argument past the
    positional parameters without ``*args``, a keyword that names no parameter without
    ``**kwargs``, one given positionally and by keyword, a positional-only one by keyword, a
    parameter without default that gets nothing)."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or \
            getattr(fn, "decorator_list", None) or \
            any(isinstance(a, ast.Starred) for a in node.args) or \
            any(k.arg is None for k in node.keywords):
        return None
    args = fn.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    if skip > len(positional):
        return None
    positional = positional[skip:]
    only = {a.arg for a in args.posonlyargs}
    if len(node.args) > len(positional) and args.vararg is None:
        return f"it takes {len(positional)} positional arguments, {len(node.args)} are given"
    given = set(positional[:len(node.args)])
    names = set(positional) | {a.arg for a in args.kwonlyargs}
    for k in node.keywords:
        if k.arg in given:
            return f"{k.arg} is given twice (by position and by keyword)"
        if (k.arg not in names or k.arg in only) and args.kwarg is None:
            return f"it has no parameter {k.arg} to pass by keyword"
        given.add(str(k.arg))
    missing = [p for p in (*positional, *(a.arg for a in args.kwonlyargs))
               if p not in given and p not in defaults(args)]
    return f"{missing[0]} is not given and has no default" if missing else None


def bound_values(module: Any, inner: Any, node: ast.Call, scope: Any, depth: int,
                 ) -> dict[str, Any]:
    """``inner``'s parameters bound for the call ``node``: defaults, then positional arguments,
    then keywords, each evaluated where it is written; every one Unresolved when the call does
    not bind (:func:`misfit`: Python raises TypeError, the body never runs with them)."""
    why = misfit(inner.node, node)
    if why is not None:
        bad = Unresolved(f"{inner.name}() at line {node.lineno} raises TypeError ({why})",
                         node.lineno)
        return dict.fromkeys(inner.params, bad)
    values: dict[str, Any] = {p: module.evaluate(d, module.module, depth + 1)
                              for p, d in inner.defaults.items()}
    values.update((p, module.evaluate(a, scope, depth + 1))
                  for p, a in zip(inner.params, node.args))
    values.update((str(kw.arg), module.evaluate(kw.value, scope, depth + 1))
                  for kw in node.keywords if kw.arg in inner.params)
    return values
