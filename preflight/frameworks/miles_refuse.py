"""A miles / slime launcher's dataclass refusing the launch line in its own ``__post_init__``
(holdout14: ``run_deepseek_v32.py train --hardware H100 --rollout-mxfp8 --train-mxfp8``).

miles' launchers check their own fields before anything runs (radixark/miles 31f1ca96,
scripts/run_deepseek_v32.py L50-L58)::

    def __post_init__(self):
        assert not (self.rollout_fp8 and self.rollout_mxfp8), "... mutually exclusive"
        if self.hardware in ("H100", "H200"):
            assert not self.rollout_mxfp8, "MXFP8 rollout is not supported on H100/H200 ..."

``dataclass_cli`` builds the dataclass from the launch line, so a failing ``assert`` (or a
``raise`` reached) stops the launch with a traceback: nothing trains. :func:`refusals` finds
them, in order, with the values the launch line gives (:mod:`preflight.reading.pydataclass`):
an ``if`` is followed where its test is decided, and a test that reads a field
``__post_init__`` itself sets (or any, once ``self`` escapes) decides nothing (the value at
that point is not the launch line's).

What was refused is what the user asked: :func:`asks` turns a refused field named for a low
precision (``train_mxfp8``, ``rollout_fp8``, ``use_nvfp4``) that the launch line switched on
into ``config.slime.refused.<field>``, and :func:`intent` into the ask it names (training or,
for a ``rollout`` field, rollout; its recipe from the name), with the refusal as its reason, so
the hardware rules say why the launcher refuses (FP8D-HW-0004, FP8D-HW-0010) instead of
reading FP8 as "not asked".
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._view import IntentOut, Stated, View
from preflight.reading.pyguards import truth
from preflight.reading.pysource import Call, Module

PREFIX = "config.slime.refused"
MAX_STATEMENTS = 256
PRECISION = re.compile(r"(?i)(?:^|_)(mx|nv)?(fp8|fp4|float8)(?:$|_)")
"""A field named for a low precision: ``train_mxfp8``, ``rollout_fp8``, ``use_nvfp4``."""


@dataclass(frozen=True)
class Refusal:
    """A check of ``__post_init__`` the launch line's values fail: where, what it says, and the
    fields its test reads."""

    line: int
    message: str
    fields: tuple[str, ...]


def refusals(module: Module, call: Call) -> list[Refusal]:
    """The ``assert`` / ``raise`` of the dataclass's ``__post_init__`` that stop the launch with
    the values of ``call`` (the first one stops it; those after it are listed for the reader)."""
    scope = module.methods.get((call.func.rsplit(".", 1)[-1], "__post_init__"))
    if scope is None or not scope.params or scope.node is None:
        return []
    me = scope.params[0]
    bound = replace(scope, values={me: call})
    written = _written(scope.node, me)
    if written is None:
        return []                   # `self` escapes: any field may change before a check
    found: list[Refusal] = []

    def reads(test: ast.expr) -> tuple[str, ...] | None:
        got = tuple(dict.fromkeys(n.attr for n in ast.walk(test) if isinstance(
            n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == me))
        return None if set(got) & written else got

    def run(body: list[ast.stmt], path: tuple[str, ...] = ()) -> bool:
        """Follow ``body`` (reached through ``if`` tests reading ``path``); True once it stops
        (a return, a raise reached)."""
        for stmt in body[:MAX_STATEMENTS]:
            if isinstance(stmt, ast.Return):
                return True
            if isinstance(stmt, ast.Raise):
                # the fields the tests that led here read: `if self.train_mxfp8: raise ...`
                # refuses what train_mxfp8 asked (redteam11: () lost the ask, FP8 "no")
                found.append(Refusal(stmt.lineno, _said(module, stmt.exc, bound), path))
                return True
            if isinstance(stmt, ast.If):
                fields = reads(stmt.test)
                test = truth(module.evaluate(stmt.test, bound, 1)) if fields is not None \
                    else None
                if test is None:
                    continue        # decided when it runs: no claim either way
                if run(stmt.body if test else stmt.orelse,
                       tuple(dict.fromkeys((*path, *(fields or ()))))):
                    return True
            elif isinstance(stmt, ast.Assert):
                fields = reads(stmt.test)
                if fields and truth(module.evaluate(stmt.test, bound, 1)) is False:
                    found.append(Refusal(stmt.lineno, _said(module, stmt.msg, bound), fields))
        return False

    run(scope.node.body)
    return found


def _written(node: ast.AST, me: str) -> set[str] | None:
    """The fields ``__post_init__`` sets on ``self``; None when ``self`` goes anywhere else
    (passed to a call, ``self.__dict__``, ``setattr``)."""
    out: set[str] = set()
    for count, sub in enumerate(ast.walk(node)):
        if count > 8 * MAX_STATEMENTS:
            return None
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and \
                sub.value.id == me:
            if sub.attr.startswith("__"):
                return None
            if isinstance(sub.ctx, (ast.Store, ast.Del)):
                out.add(sub.attr)
        elif isinstance(sub, ast.Call) and any(
                isinstance(a, ast.Name) and a.id == me
                for a in (*sub.args, *(k.value for k in sub.keywords))):
            return None
    return out


def _said(module: Module, node: ast.expr | None, scope: Any) -> str:
    """What the check says: its message where the text gives it, else its source."""
    if node is None:
        return "an assertion fails"
    target = node.args[0] if isinstance(node, ast.Call) and node.args else node
    value = module.evaluate(target, scope, 1)
    return value[:200] if isinstance(value, str) else ast.unparse(node)[:200]


def asks(module: Module, call: Call, found: list[Refusal]
         ) -> tuple[dict[str, Any], dict[str, int]]:
    """``config.slime.refused`` (the first refusal: the launch stops there) and
    ``config.slime.refused.<field>`` for each low-precision field a failing check reads that
    the launch line switched on; with the lines they are at."""
    if not found:
        return {}, {}
    first = found[0]
    why = f"__post_init__ line {first.line}: {first.message}"
    facts: dict[str, Any] = {PREFIX: why}
    lines = {PREFIX: first.line}
    # every check the values fail (the first stops the launch; each names what was asked)
    for refusal in found:
        for name in refusal.fields:
            if PRECISION.search(name) and call.kwargs.get(name) is True:
                facts[f"{PREFIX}.{name}"] = True
                lines[f"{PREFIX}.{name}"] = call.lines.get(name, refusal.line)
    return facts, lines


def intent(f: Mapping[str, Any], view: View, out: IntentOut) -> None:
    """The asks a refusal names, into ``out``, where the job's own
    reading did not already say FP8 "yes": training from a field not named for the rollout,
    rollout from one that is; the recipe from the name (``mxfp8``, ``nvfp4``)."""
    why = f.get(PREFIX)
    if not isinstance(why, str):
        return
    for key, value in f.items():
        if not key.startswith(f"{PREFIX}.") or value is not True:
            continue
        name = key[len(PREFIX) + 1:]
        kind = PRECISION.search(name)
        recipe = {"mx": "mxfp8", "nv": "nvfp4"}.get((kind.group(1) or "").lower()) \
            if kind else None
        said = (f"{view.src(key[len('config.slime.'):])} ({name} asked, and refused by the "
                f"launcher before anything runs: {why})")
        where: tuple[Stated, Stated] = ("rollout.fp8", "rollout.recipe") \
            if "rollout" in name.lower() else ("fp8", "recipe")
        if out.get(where[0], (None,))[0] is not True:
            out[where[0]] = (True, said)
            if recipe is not None:
                out[where[1]] = (recipe, said)
        elif recipe is not None and isinstance(out.get(where[1], (None,))[0], (Unknown,
                                                                              type(None))):
            out[where[1]] = (recipe, said)
