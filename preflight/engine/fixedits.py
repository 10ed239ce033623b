"""``fix.edits`` of a rule: the config changes ``fp8-doctor check --diff`` makes, validated at
load (docs/rule-format.md, "Fix edits")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.engine.model import Reporter
from preflight.findings import EditSpec

_SCALAR = (str, int, float, bool)


def _value_ok(value: Any) -> bool:
    return isinstance(value, _SCALAR) or isinstance(value, list) and bool(value) and all(
        isinstance(v, _SCALAR) for v in value)


def _is_config_fact(fact: Any) -> bool:
    return isinstance(fact, str) and fact.startswith("config.") and fact.count(".") >= 2


def parse_edits(raw: Any, rep: Reporter) -> tuple[EditSpec, ...]:
    """``fix.edits``: the config changes ``check --diff`` makes (docs/rule-format.md, "Fix
    edits"), each ``{fact: config.<kind>.<key>, ...}`` with one of ``set: VALUE`` (change or
    add), ``replace: VALUE`` (change only where the job sets it), ``delete: true`` (``delete: parent``:
    the block that holds the key),
    ``move_to: config.<kind>.<key>`` (a renamed or relocated key, its value kept), or
    ``remove_item: VALUE`` (take these items out of the list the job wrote, keeping the others
    in their order). VALUE is a scalar or a list of scalars."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        rep.error(("fix", "edits"), "fix.edits must be a list of {fact, set|delete}")
        return ()
    out = []
    for i, item in enumerate(raw):
        where = ("fix", "edits", i)
        fact = item.get("fact") if isinstance(item, Mapping) else None
        if not _is_config_fact(fact):
            rep.error(where, "an edit needs fact: config.<kind>.<key> (a file's own key)")
            continue
        assert isinstance(item, Mapping) and isinstance(fact, str)
        keys = set(item) - {"fact"}
        action = next(iter(keys)) if len(keys) == 1 else None
        if action in ("set", "replace") and _value_ok(item[action]):
            out.append(EditSpec(fact, action, item[action]))
        elif action == "delete" and item["delete"] in (True, "parent"):
            out.append(EditSpec(fact, "delete", None if item["delete"] is True else "parent"))
        elif action == "move_to" and _is_config_fact(item["move_to"]):
            out.append(EditSpec(fact, "move", item["move_to"]))
        elif action == "remove_item" and _value_ok(item[action]):
            items = item[action] if isinstance(item[action], list) else [item[action]]
            out.append(EditSpec(fact, "remove_item", items))
        else:
            rep.error(where, "an edit is {fact, set|replace: VALUE}, {fact, delete: true|parent}, "
                             "{fact, move_to: config.<kind>.<key>} or {fact, remove_item: VALUE} "
                             "(VALUE: a scalar or a list of scalars)")
    return tuple(out)
