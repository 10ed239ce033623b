"""``functools.partial(f, a, k=v)`` read as the call of ``f`` it binds (issue 22: values carried
between functions). A function handed on as ``partial(f, args)`` (a callback) is called later with
the arguments the partial holds, and any others where the partial itself is called: the bound
ones are known from the text, the others are not (:mod:`.pycallers` leaves them Unresolved).
"""

from __future__ import annotations

import ast

from preflight.reading.pyvalues import dotted


def partial_names(tree: ast.Module) -> frozenset[str]:
    """The names ``functools.partial`` is imported as (``functools`` itself included)."""
    names = {"functools.partial"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "functools":
            names.update(a.asname or a.name for a in node.names if a.name == "partial")
    return frozenset(names)


def bound_call(node: ast.AST, partials: frozenset[str]) -> ast.Call | None:
    """``partial(f, *a, **k)`` as the call ``f(*a, **k)`` it binds (its other arguments are
    given where the partial is called: :mod:`.pycallers` and :mod:`.pycallables` leave them
    Unresolved); ``real`` is the partial's own node, whose scope and guards the call has (miles'
    scripts/run_deepseek.py at radixark/miles 31f1ca96:
    ``before_ray_job_submit=partial(_prepare_ray_dependent, args)``)."""
    if not (isinstance(node, ast.Call) and dotted(node.func) in partials and node.args
            and isinstance(node.args[0], ast.Name)):
        return None
    bound = ast.Call(func=ast.Name(node.args[0].id, ast.Load()), args=node.args[1:],
                     keywords=node.keywords)
    ast.copy_location(bound, node)
    bound.real = node       # type: ignore[attr-defined]
    return bound


def site_node(node: ast.Call) -> ast.Call:
    """The call node the text holds (a ``partial(...)``'s own node for the call it binds)."""
    return getattr(node, "real", node)
