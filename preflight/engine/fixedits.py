"""``fix.edits`` of a rule: the config changes ``fp8-doctor check --diff`` makes, validated at
load (docs/rule-format.md, "Fix edits")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.engine.model import Reporter
from preflight.findings import EditSpec


def parse_edits(raw: Any, rep: Reporter) -> tuple[EditSpec, ...]:
    """``fix.edits``: ``[{fact: config.<kind>.<key>, set: VALUE} | {fact: ..., delete: true}]``,
    the config changes ``check --diff`` makes (docs/rule-format.md, "Fix edits")."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        rep.error(("fix", "edits"), "fix.edits must be a list of {fact, set|delete}")
        return ()
    out = []
    for i, item in enumerate(raw):
        where = ("fix", "edits", i)
        fact = item.get("fact") if isinstance(item, Mapping) else None
        if not isinstance(fact, str) or not fact.startswith("config.") or fact.count(".") < 2:
            rep.error(where, "an edit needs fact: config.<kind>.<key> (a file's own key)")
            continue
        keys = set(item) - {"fact"}
        if keys == {"set"} and isinstance(item["set"], (str, int, float, bool)):
            out.append(EditSpec(fact, "set", item["set"]))
        elif keys == {"delete"} and item["delete"] is True:
            out.append(EditSpec(fact, "delete"))
        else:
            rep.error(where, "an edit is {fact, set: SCALAR} or {fact, delete: true}")
    return tuple(out)
