"""The facts of a parsed config: its data flattened to dotted names, each with its line, capped.

Split out of :mod:`.parse` (shfix2, session 39: it was at the 400-line bound). Every reader
that turns parsed data into facts goes through :func:`flatten` / :func:`fact_value`, so the caps
on facts and list items per file (no document can make the report slow) live here; a key that
cannot be part of a fact name is skipped (:func:`usable_key`), and values become JSON-ready
(:func:`jsonable`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from preflight.base.keypaths import Path
from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading.types import cut_short

if TYPE_CHECKING:
    from preflight.reading.parse import Parsed


MAX_FACTS_PER_FILE = 2000
"""Facts kept from one file. NeMo's full megatron_gpt_config.yaml has about 300 keys and
Megatron-LM has about 600 flags; every fact costs ~40 us to redact and render, so a 1 MB JSON of
72,000 keys spent a second there at the old cap of 5,000."""

MAX_ITEMS_PER_FACT = 2048
"""A list (or mapping kept whole) with more items is no setting a rule reads: it is kept as
``Unknown``. Every item is later redacted and rendered one by one (~30 us each), so a 900 KB JSON
list of 100,000 short strings took 2.7 s to report."""

MAX_ITEMS_PER_FILE = 8192
"""All list items of one file's facts together (the same cost, spread over many keys)."""


def usable_key(key: Any) -> bool:
    """A key that can be part of a fact name: no empty dotted segment, no line break."""
    text = "" if key is None else str(key)
    return bool(text) and "\n" not in text and all(text.split("."))


def flatten(data: Any, parsed: Parsed, prefix: str, where: str, base: Path = (),
            facts: dict[str, Any] | None = None, prov: dict[str, str] | None = None,
            budget: list[int] | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """``{prefix.k1.k2: leaf}`` for every leaf of ``data`` (a mapping), provenance ``where:line``.

    Leaves are scalars and lists (lists stay lists); an empty mapping stays ``{}`` so that its
    presence is visible. Keys are kept as written; empty keys are skipped (no fact name can hold
    them). Iterative, and capped (``budget``: items left for the whole file, shared with the
    caller's other readings of it): no document can exhaust the stack or memory here."""
    facts = {} if facts is None else facts
    prov = {} if prov is None else prov
    budget = [MAX_ITEMS_PER_FILE] if budget is None else budget
    todo: list[tuple[Any, Path]] = [(data, base)]
    while todo:
        node, path = todo.pop()
        if isinstance(node, dict) and (node or not path):
            for key, value in reversed(list(node.items())):  # reversed: facts in file order
                if not usable_key(key):
                    continue
                todo.append((value, (*path, key)))
            continue
        if not path:
            continue
        name = prefix + "." + ".".join(str(p) for p in path)
        if len(facts) >= MAX_FACTS_PER_FILE:
            cut_short(facts, prov, name, Source(where, parsed.line_of(path)))
            break
        facts[name] = fact_value(node, budget)
        line = parsed.line_of(path)
        prov[name] = Source(where, line)
    return facts, prov


def fact_value(value: Any, budget: list[int]) -> Any:
    """:func:`jsonable`, or ``Unknown`` for a list too long to be a setting (see
    :data:`MAX_ITEMS_PER_FACT`); ``budget`` holds the items the file may still spend."""
    if isinstance(value, (list, tuple, dict)):
        items = _items(value, MAX_ITEMS_PER_FACT + 1)
        what = "mapping" if isinstance(value, dict) else "list"
        if items > MAX_ITEMS_PER_FACT:
            return Unknown(f"a {what} of more than {MAX_ITEMS_PER_FACT:,} items: too large to "
                           "keep as a setting")
        if items > budget[0]:
            return Unknown(f"a {what} of {items:,} items, after the file's lists already held "
                           f"{MAX_ITEMS_PER_FILE - budget[0]:,}: too large to keep as a setting")
        budget[0] -= items
    return jsonable(value)


def _items(value: Any, limit: int) -> int:
    """Items in nested lists/mappings, counting stops at ``limit``."""
    count = 0
    todo = [value]
    while todo and count < limit:
        node = todo.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, (list, tuple)):
            count += len(node)
            todo.extend(v for v in node if isinstance(v, (list, tuple, dict)))
    return count


def jsonable(value: Any) -> Any:
    """Values as parsed, but JSON-serializable: dates and the like become strings, and so do
    NaN and infinities (``.nan``, ``nan``, ``NaN``): JSON has no such numbers, and
    ``json.dumps`` writes bare ``NaN`` that strict JSON readers refuse."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return str(value)
