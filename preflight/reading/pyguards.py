"""The conditions a statement of a Python job file runs under, and whether the text decides them
(issue 22 items 1 and 5: a value set under a condition the reader cannot decide is Unknown with
the reason, never taken as set, nor as unset).

:mod:`.pyscopes` gives every binding, attribute set, return and call the guards it runs under,
outermost first: an ``if`` / ``elif`` / ``else`` test and the side the statement is on, the test
of an ``if`` whose branch returns (what follows runs only when it does not), a loop body, an
``except`` handler, a ``match`` case. :func:`decide` evaluates them with :mod:`.pysource`: a test
whose value the text gives (literals, a name bound once, an argparse option from the launch line
that runs the script or its ``default=``) decides the branch, and so does a ``match`` case of
literals (``case "megatron":`` is ``subject == "megatron"`` after the cases above did not match:
:mod:`.pyscopes`); a loop, a handler, a case that binds names or tests a class, or a test
computed when the script runs leaves it undecided, with the reason. A loop body counts as
running for the calls in it (a training loop runs), not for the names it binds (their value
after the loop is that of an iteration the text does not say); so does the code after an
``if ...: return`` whose test the text does not decide (``if self.model is not None: return``
in Lightning's ``configure_model``: past its early exits is a function's main path), while one
it decides (``if not args.fp8: return`` with ``--fp8`` on the launch line) is followed.

:func:`compare`, :func:`boolop` and :func:`truth` are the small part of Python's semantics
that a test needs, over the values :mod:`.pysource` gives: only plain literals are compared;
an imported name, a call's result or anything unresolved leaves the test undecided.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from preflight.reading.pyoutside import why as why_outside
from preflight.reading.pyvalues import Call, Unresolved

__all__ = ["Guard", "boolop", "compare", "decide", "text", "truth"]

MAX_TEXT = 60
"""Characters of a test quoted in a reason."""


@dataclass(frozen=True, eq=False)
class Guard:
    """One condition a statement runs under."""

    line: int
    test: ast.expr | None = None
    """An ``if`` / ``elif`` test; None for a loop body, a handler or a case (``why``)."""
    holds: bool = True
    """The statement runs when ``test`` is true (False: the ``else`` side)."""
    why: str = ""
    loop: bool = False
    returns: bool = False
    """What follows an ``if`` whose branch returns: runs when that branch does not."""
    raises: bool = False
    """What follows an ``if`` whose branch raises (``if not ok: raise ...``): runs only when that
    branch does not, and the raising side leaves nothing behind, so a test the text does not
    decide still lets it run (the run that goes on is the one where the test failed)."""
    dead: bool = False
    """Inside a branch that raises, or (for the names it binds) an ``except ImportError``
    handler of a ``try`` that imports a package (``missing``): never part of the run the job
    asks for; the handler runs only where the package is not installed, an environment fact the
    environment's checks decide, so ``HAS_TE = False`` there is not the job's ask (its calls are
    still made under that condition)."""
    missing: str = ""


Guards = tuple[Guard, ...]
Evaluate = Callable[[ast.expr], Any]


def decide(guards: Sequence[Guard], evaluate: Evaluate, calls: bool) -> bool | Unresolved:
    """True when the statement runs, False when the text shows it does not, else Unresolved
    with the first condition the text does not decide. ``calls``: a loop body, and the code
    after an ``if ...: return`` the text does not decide, count as running (a training loop
    runs; past its early exits is a function's main path); a name bound in a loop has no
    single value."""
    first: Unresolved | None = None
    for guard in guards:
        if guard.dead and not (guard.missing and calls):
            return False        # (a call in the fallback: made where the package is missing)
        if guard.test is None:
            if not (guard.loop and calls) and first is None:
                first = Unresolved(guard.why, guard.line)
            continue
        got = evaluate(guard.test)
        value = truth(got)
        if value is None:
            if first is None and not (guard.returns and calls) and not guard.raises:
                first = Unresolved(_undecided(guard, got), guard.line)
        elif value != guard.holds:
            return False
    return True if first is None else first


def _undecided(guard: Guard, got: Any) -> str:
    assert guard.test is not None
    why = got.reason if isinstance(got, Unresolved) else why_outside(got) or \
        "its value is known only when the script runs"
    where = (f"after `if {text(guard.test)}: return` (line {guard.line})" if guard.returns else
             f"under `if {text(guard.test)}` (line {guard.line})" if guard.holds else
             f"in the else branch of `if {text(guard.test)}` (line {guard.line})")
    return f"set {where}, a condition the text does not decide: {why}"


def text(test: ast.expr) -> str:
    """The test as written, cut short."""
    try:
        out = ast.unparse(test)
    except (RecursionError, ValueError):
        return "a condition"
    return out if len(out) <= MAX_TEXT else out[:MAX_TEXT - 3] + "..."


_PLAIN = (str, int, float, bool, type(None))


def plain(value: Any) -> bool:
    """A literal the text gives whole (a list or dict of such literals too)."""
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, (list, frozenset)):     # (a set: reading/pybuiltins.py)
        return all(plain(v) for v in value)
    if isinstance(value, dict):
        return all(plain(v) for v in value.values())
    return False


def truth(value: Any) -> bool | None:
    """Python's truth of ``value``; None when the text does not give it."""
    if isinstance(value, _PLAIN):
        return bool(value)
    if isinstance(value, (list, dict, frozenset)):  # their length is known, items or not
        return bool(value)
    return None


def compare(ops: Sequence[ast.cmpop], values: Sequence[Any], line: int | None) -> Any:
    """A chained comparison of plain values, else Unresolved."""
    if len(ops) == 1 and isinstance(ops[0], (ast.Is, ast.IsNot)) and None in values and \
            any(instance(v) for v in values):
        # `recipe is not None` after `recipe = te_recipe.MXFP8BlockScaling(...)`: an instance
        return isinstance(ops[0], ast.IsNot)
    if not all(plain(v) for v in values):
        bad = next((v for v in values if isinstance(v, Unresolved)), None)
        outside = next((w for w in map(why_outside, values) if w), None)
        return bad if bad is not None else Unresolved(
            outside or "compares a value the text does not give (an imported name or a call's "
            "result)", line)
    for op, left, right in zip(ops, values, values[1:]):
        try:
            result = _compare(op, left, right)
        except TypeError:
            return Unresolved("a comparison Python would refuse", line)
        if result is None:
            return Unresolved("a comparison computed when the script runs", line)
        if not result:
            return False
    return True


_CLASS_LIBS = ("transformer_engine.", "torchao.")


def instance(value: Any) -> bool:
    """A call that builds an object of one of the FP8 libraries' classes (a CamelCase name
    under transformer_engine / torchao: ``MXFP8BlockScaling(...)``, ``Float8LinearConfig(...)``):
    never None. Other calls may return None, so stay Unresolved."""
    return isinstance(value, Call) and value.func.startswith(_CLASS_LIBS) and \
        value.name[:1].isupper() and any(c.islower() for c in value.name) and value.when is None


def _compare(op: ast.cmpop, left: Any, right: Any) -> bool | None:
    if isinstance(op, ast.Eq):
        return bool(left == right)
    if isinstance(op, ast.NotEq):
        return bool(left != right)
    if isinstance(op, (ast.Is, ast.IsNot)):
        if not any(v is None or isinstance(v, bool) for v in (left, right)):
            return None            # identity of other objects is not in the text
        same = left is right if not isinstance(left, bool) else \
            isinstance(right, bool) and left == right
        return same if isinstance(op, ast.Is) else not same
    if isinstance(op, (ast.In, ast.NotIn)):
        if not isinstance(right, (list, dict, str, frozenset)):
            return None
        found = left in right
        return found if isinstance(op, ast.In) else not found
    if isinstance(op, ast.Lt):
        return bool(left < right)
    if isinstance(op, ast.LtE):
        return bool(left <= right)
    if isinstance(op, ast.Gt):
        return bool(left > right)
    if isinstance(op, ast.GtE):
        return bool(left >= right)
    return None


def boolop(node: ast.BoolOp, evaluate: Evaluate) -> Any:
    """``a and b`` / ``a or b`` as Python computes it, operand by operand: a known operand that
    decides the result ends it; one the text does not give before that leaves it Unresolved."""
    is_and = isinstance(node.op, ast.And)
    value: Any = None
    open_: Unresolved | None = None
    for operand in node.values:
        value = evaluate(operand)
        known = truth(value)
        if known is None:
            open_ = open_ or (value if isinstance(value, Unresolved) else Unresolved(
                why_outside(value) or f"`{text(operand)}` is known only when the script runs",
                node.lineno))
            continue
        if known != is_and:      # False ends an `and`, True ends an `or`
            if open_ is None:
                return value
            # after an operand not known, `x and False` is x (false) or False: false either
            # way (`self.training and not os.environ.get("DISABLE_FP8", False)` under
            # DISABLE_FP8=1, modded-nanogpt train_gpt.py:1498 @ f411b3d3); `x or "d"` stays
            # not known (its value is x's when x is true)
            return False if is_and and value is False else open_
    return open_ or value
