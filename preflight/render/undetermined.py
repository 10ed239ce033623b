"""Undetermined rules grouped by what they are missing, so twenty of them do not bury two errors.

Why (issue 24 item 5): a laptop's report listed 20 undetermined rules one by one (about 45 of
117 lines at 80 columns), while they all wanted one of a few things: the job's settings, the
training node's packages, its GPU. Each group here is one line, "15 rules need the training
node's packages: run there, or --snapshot from there, or --assume pkg.NAME=VERSION", then why
those facts are unknown (each reason once, by its head) and the rule ids. ``-v`` still lists
every rule with its title and every reason in full.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from preflight.facts import reason_head
from preflight.render._common import fmt_value, is_unknown

# (key, fact prefixes, what the rules need, how to give it). The order is the order in labels.
_NEEDS: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    ("job", ("intent.", "config.", "default."), "the job's settings",
     "name the job's config files, or --assume intent.NAME=VALUE"),
    ("packages", ("pkg.", "import."), "the training node's packages", "pkg.NAME=VERSION"),
    ("gpu", ("gpu.", "cuda.", "host.", "env.", "cluster."), "the training node's GPU",
     "gpu=NAME"),
    ("smoke", ("smoke.",), "the smoke step", "run it on the training GPU (--smoke)"),
    ("runtime", ("runtime.",), "the running job",
     "inspect the run (preflight.inspect or a callback)"),
)
_OTHER = ("other", (), "other facts", "-v shows which and why")
_NODE = ("packages", "gpu")   # given by running there, a snapshot from there, or --assume
_NOT_INSTALLED = re.compile(r"^(\S+) is not installed (here|in the .+)$")


@dataclass(frozen=True)
class Group:
    """Undetermined rules that need the same kinds of facts."""

    needs: tuple[str, ...]        # keys of _NEEDS (or "other")
    rule_ids: tuple[str, ...]
    reasons: tuple[str, ...]      # why those facts are unknown, each head once

    @property
    def label(self) -> str:
        nouns = [n for k, _, n, _ in (*_NEEDS, _OTHER) if k in self.needs]
        if set(_NODE) <= set(self.needs):   # not "the training node's packages and the ..."
            nouns = [n for n in nouns if "GPU" not in n]
            nouns[nouns.index("the training node's packages")] += " and GPU"
        count = len(self.rule_ids)
        return f"{count} rule{'s' if count != 1 else ''} need{'s' if count == 1 else ''} " \
               + " and ".join(nouns)

    @property
    def advice(self) -> str:
        """How to give what the group needs, in the order of the label."""
        hints = [h for k, _, _, h in _NEEDS if k in self.needs and k in _NODE]
        parts: list[str] = []
        for k, _, _, how in (*_NEEDS, _OTHER):
            if k not in self.needs:
                continue
            if k not in _NODE:
                parts.append(how)
            elif hints:   # the node's packages and GPU: one piece of advice
                parts.append("run there, or --snapshot from there, or --assume "
                             + " / ".join(hints))
                hints = []
        return "; ".join(parts)


def _need(fact: str) -> str:
    return next((k for k, prefixes, _, _ in _NEEDS if fact.startswith(prefixes)), "other")


def _reasons(values: list[Any]) -> tuple[str, ...]:
    heads: list[str] = []
    missing: dict[str, list[str]] = {}
    for value in values:
        head = reason_head(str(value["$unknown"])) if is_unknown(value) else fmt_value(value)
        m = _NOT_INSTALLED.match(head)
        if m:   # "a is not installed here", "b is not installed here" -> one line
            where = f"not installed {m.group(2)}"
            if where not in missing:
                heads.append(where)
            missing.setdefault(where, []).append(m.group(1))
        elif head not in heads:
            heads.append(head)
    return tuple(f"{h}: {', '.join(dict.fromkeys(missing[h]))}" if h in missing else h
                 for h in heads)


def groups(doc: dict[str, Any]) -> list[Group]:
    """The document's undetermined rules by what they need, the largest group first."""
    by_needs: dict[tuple[str, ...], tuple[list[str], list[Any]]] = {}
    order = [k for k, *_ in (*_NEEDS, _OTHER)]
    for u in doc.get("undetermined") or []:
        unknown = u.get("unknown") or []
        kinds = {_need(str(e.get("fact", ""))) for e in unknown} or {"other"}
        key = tuple(k for k in order if k in kinds)
        ids, values = by_needs.setdefault(key, ([], []))
        ids.append(str(u.get("id", "")))
        values.extend(e.get("value") for e in unknown)
    out = [Group(key, tuple(ids), _reasons(values)) for key, (ids, values) in by_needs.items()]
    return sorted(out, key=lambda g: -len(g.rule_ids))
