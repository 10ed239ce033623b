"""A function's parameter defaults as written (``def f(a, b=1, *, c=2)``), read from its syntax
tree: the one place that lines ``args.defaults`` up with the positional parameters they belong
to (the last ones: Python's rule, "Function definitions" in the language reference) and pairs
keyword-only parameters with ``kw_defaults`` (None there: no default)."""

from __future__ import annotations

import ast


def defaults(args: ast.arguments) -> dict[str, ast.expr]:
    """Each parameter with a default: its name -> the default's expression (not evaluated)."""
    positional = [*args.posonlyargs, *args.args]
    out = {a.arg: d for a, d in zip(positional[len(positional) - len(args.defaults):],
                                    args.defaults)}
    out.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return out
