"""Lint check: a rule that compares a fact of a closed vocabulary with a value outside it.

Fact specs with ``choices`` (``intent.backend``: te | torchao | msamp | none) name every value
their producer emits; ``{fact: intent.backend, op: eq, value: transformer_engine}`` can never
match, and a rule that never fires is a silent false all-clear.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from preflight.engine.conditions import Leaf, Node
from preflight.registry import registry

_COMPARING = {"eq", "ne", "in", "not_in"}


def _leaves(node: Node) -> Iterator[Leaf]:
    if isinstance(node, Leaf):
        yield node
        return
    for child in getattr(node, "children", ()) or ():
        yield from _leaves(child)
    child = getattr(node, "child", None)
    if isinstance(child, Node):
        yield from _leaves(child)


def outside_vocabulary(when: Node) -> list[str]:
    """One message per comparison in ``when`` with a value no producer of that fact emits."""
    out: list[str] = []
    for leaf in _leaves(when):
        if leaf.op not in _COMPARING:
            continue
        spec = registry().lookup(leaf.fact)
        if spec is None or not spec.choices:
            continue
        values: list[Any] = list(leaf.value) if isinstance(leaf.value, (list, tuple)) \
            else [leaf.value]
        bad = [v for v in values if v not in spec.choices]
        if bad:
            out.append(f"{leaf.fact} {leaf.op} {', '.join(map(repr, bad))}: no reader produces "
                       f"that value (it is one of {', '.join(spec.choices)})")
    return out
