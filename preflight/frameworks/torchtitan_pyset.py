"""torchtitan config functions that return a helper's result: ``return _20b_mxfp8(gpt_oss_20b())``
where the helper (a function of the same registry) sets attributes on the config it is given
and returns it (``config.model_spec = model_registry(flavor, converters=[MXFP8LinearConverter.
Config(...), ...]); return config``). The evaluator gives the helper's result as the base config
it was passed (the call's value); the helper's ``config.<field> = value`` statements are applied
here, its parameters bound to the call's arguments or their defaults, a set under a condition the
text does not decide Unknown (:func:`preflight.reading.pycallers.apply_sets`).

Seen in LambdaLabsML/torchtitan 03508523 torchtitan/models/gpt_oss/config_registry.py
(``gpt_oss_20b_gb300_mxfp8``, holdout23): read without this, the MXFP8 converters were dropped and
FP8 came out "no".
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

from preflight.reading.pycallers import apply_sets, bound_values
from preflight.reading.pyscopes import Scope
from preflight.reading.pysource import Call, Module

_MAX_DEPTH = 4


def through_helpers(module: Module, scope: Scope, result: Any) -> Any:
    """``result`` (what ``scope``'s function returns, as evaluated) with the attribute sets of
    the helpers its single return passes the config through."""
    if not isinstance(result, Call) or len(scope.returns) != 1 or scope.returns[0][1]:
        return result
    return _apply(module, scope.returns[0][0], scope, result, 0)


def _helper(module: Module, node: ast.expr) -> tuple[Scope, str] | None:
    """The file's function ``node`` calls, when it returns one of its parameters unchanged
    in name and sets attributes on it; with that parameter's name."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
            node.func.id in module.functions):
        return None
    inner = module.functions[node.func.id][1]
    if len(inner.returns) != 1 or inner.returns[0][1]:
        return None
    ret = inner.returns[0][0]
    if not (isinstance(ret, ast.Name) and ret.id in inner.params and inner.sets.get(ret.id)):
        return None
    return inner, ret.id


def _apply(module: Module, node: ast.expr, scope: Scope, result: Call, depth: int) -> Call:
    found = _helper(module, node) if depth < _MAX_DEPTH else None
    if found is None:
        return result
    inner, name = found
    assert isinstance(node, ast.Call)
    index = inner.params.index(name)
    given = node.args[index] if index < len(node.args) else next(
        (kw.value for kw in node.keywords if kw.arg == name), None)
    if given is not None:       # the config passed may itself go through a helper first
        result = _apply(module, given, scope, result, depth + 1)
    values = bound_values(module, inner, node, scope, depth)
    values[name] = result
    return apply_sets(module, result, replace(inner, values=values), name, depth + 1)
