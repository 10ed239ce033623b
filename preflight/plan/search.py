"""The upgrade plan's search: the fewest version changes to the FP8 stack that clear every
version-gated finding, proven by evaluating the rules again with those versions assumed.

A finding is *version-gated* when its rule tests the version of a package that is installed (or
snapshotted, or assumed). The versions tried come from the rules themselves (every ``introduced``
/ ``fixed`` event and version bound they state, mapped to the nearest real release on either
side) and from the release lists shipped in ``preflight/data/releases.json`` (no network at run
time; ``tools/refresh_releases.py`` refreshes it). The compatibility tables (torch <-> torchao,
TE <-> torch, driver <-> CUDA build, ...) are rules too, so a candidate that clears one finding
and raises another is rejected: a plan is accepted only when re-evaluating the whole rule base
gives no version-gated finding and no finding (warning or error) that was not there before,
and only when the stack can be installed: every release's recorded ``Requires-Dist`` holds for
the planned versions (:mod:`.requires`); a release that needs another package moved brings that
package into the search, with the releases that meet the requirement.

Search: single changes first, then pairs, then triples (the smallest set wins; among equals,
upgrades before downgrades, then the nearest releases). Each candidate costs one evaluation of
the rule base (tens of microseconds per rule), and the candidates per package are only the
releases next to the bounds the firing rules name, so a plan takes milliseconds to a second.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.base.versions import comparison_key
from preflight.engine.conditions import Leaf, Node
from preflight.engine.model import Rule, RuleSet
from preflight.facts import Facts
from preflight.findings import Severity
from preflight.plan.releases import (
    Releases,
    candidates,
    shipped_releases,
    with_label,
)
from preflight.plan.requires import Requires, environment

MAX_CHANGES = 3
"""Plans change at most this many packages (a larger change is a migration, not a plan)."""
MAX_CANDIDATES = 4_000
"""Candidate stacks evaluated at most; past it the search says it stopped early."""

_VERSION = re.compile(r"\d+(?:\.\d+)+(?:(?:a|b|rc|\.post|\.dev)\d+)?")
_PKG_FACT = re.compile(r"^pkg\.([a-z0-9][a-z0-9._-]*)\.version$")


@dataclass(frozen=True)
class Change:
    """One package moved from one version to another, and the findings that move clears."""

    package: str
    current: str
    target: str
    clears: tuple[str, ...] = ()

    @property
    def upgrade(self) -> bool:
        a, b = comparison_key(self.current), comparison_key(self.target)
        return a is None or b is None or b > a


@dataclass(frozen=True)
class Plan:
    """What ``fp8-doctor plan`` found. ``changes`` is empty when nothing needs changing or no
    known release clears the findings (then ``uncleared`` names them and ``why`` says so)."""

    gated: tuple[str, ...]                     # version-gated findings now (rule ids)
    changes: tuple[Change, ...] = ()
    uncleared: tuple[str, ...] = ()            # version-gated findings no plan clears
    other: tuple[str, ...] = ()                # findings a version change cannot clear
    rules_evaluated: int = 0
    candidates_tried: int = 0
    proof: tuple[str, ...] = ()                # rule ids still firing with the plan applied
    new_findings: tuple[str, ...] = ()         # must stay empty for an accepted plan
    why: str = ""
    releases: Releases = field(default_factory=lambda: Releases("unknown", "", {}))
    truncated: bool = False
    blocked: tuple[str, ...] = ()              # why candidate stacks could not be installed
    unchecked: tuple[str, ...] = ()            # planned releases without recorded requirements


def versions_of(facts: Facts) -> dict[str, str]:
    """Installed (snapshotted, assumed) package versions, from ``pkg.<name>.version`` facts."""
    out: dict[str, str] = {}
    for name, value in facts.values.items():
        m = _PKG_FACT.match(name)
        if m and isinstance(value, str) and comparison_key(value) is not None:
            out[m.group(1)] = value
    return out


def _leaves(node: Node) -> Iterable[Leaf]:
    if isinstance(node, Leaf):
        yield node
        return
    for child in getattr(node, "children", None) or ([node.child] if hasattr(node, "child")
                                                      else []):
        yield from _leaves(child)


def gating_packages(rule: Rule, installed: Mapping[str, str]) -> set[str]:
    """Installed packages whose version the rule tests."""
    out = set()
    for name in rule.facts_used():
        m = _PKG_FACT.match(name)
        if m and m.group(1) in installed:
            out.add(m.group(1))
    return out


def bounds(rule: Rule, package: str) -> set[str]:
    """Every version the rule names for ``package``: its typed ``affected`` range events and
    the bounds of its version conditions."""
    found: set[str] = set()
    for affected in rule.affected:
        if affected.package == package:
            found.update(v for r in affected.ranges for _, v in r.events
                         if _VERSION.fullmatch(v))
    for leaf in _leaves(rule.when):
        if leaf.fact == f"pkg.{package}.version":
            found.update(_VERSION.findall(json.dumps(_plain(leaf.value))))
    return found


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def make_plan(facts: Facts, ruleset: RuleSet, rederive: Any,
              releases: Releases | None = None, *, downgrades: bool = False) -> Plan:
    """The smallest version plan for ``facts`` under ``ruleset``.

    ``rederive(facts, {package: version})`` returns the facts with those versions assumed and
    everything derived from them recomputed (the API's assume + intent step)."""
    releases = releases or shipped_releases()
    installed = versions_of(facts)
    active = [r for r in ruleset.rules if r.withdrawn is None and r.too_new is None]
    serious = {r.id for r in active if r.severity in (Severity.ERROR, Severity.WARNING)}

    before = {r.id for r in active if r.when.fn(facts.values) is True}
    # A candidate changes a few facts (versions, what derives from them): only the rules that
    # read one of those are evaluated again; the rest keep their outcome (half the plan's time).
    readers: dict[str, list[Rule]] = {}
    for rule in active:
        for name in rule.facts_used():
            readers.setdefault(name, []).append(rule)
    base = facts.values
    missing = object()

    def firing(values: Mapping[str, Any]) -> set[str]:
        changed = {k for k, v in values.items() if base.get(k, missing) != v}
        changed |= {k for k in base if k not in values}
        touched = {r.id: r for k in changed for r in readers.get(k, ())}
        return (before - set(touched)) | {rid for rid, r in touched.items()
                                          if r.when.fn(values) is True}
    by_id = {r.id: r for r in active}
    gated = {rid for rid in before if gating_packages(by_id[rid], installed)}
    other = tuple(sorted(before - gated))
    if not gated:
        return Plan((), other=other, rules_evaluated=len(active), releases=releases,
                    why="no finding depends on a package version")
    requires = Requires(releases.requires, environment(facts.values))
    search = _Search(facts, installed, gated, before, serious, by_id, firing, rederive, releases,
                     downgrades, requires)
    rules_in_play = set(gated)
    for _ in range(ROUNDS):
        # Each round widens the search to the packages and bounds of the rules that the last
        # round's candidates newly raised (upgrading accelerate can raise a TE rule: then TE's
        # versions join the search), and to the packages a candidate's requirements need moved.
        searched = set(search.needed)
        if search.run(rules_in_play) or not (search.raised - rules_in_play
                                             or set(search.needed) - searched):
            break
        rules_in_play |= search.raised
    best = search.best
    blocked = tuple(dict.fromkeys(w for _, w in search.refused))[:5]
    if best is not None and best[0][0] >= len(gated):
        best = None                  # it clears nothing: not a plan (issue 24, newcomer #3)
    if best is None:
        why = "no known release of the packages these findings test clears them"
        # pip stood in the way only if a refused stack clears one (audit of issue 24 item 4)
        stuck = [w for p, w in search.refused if gated - search.firing(rederive(facts, p).values)]
        blocked = tuple(dict.fromkeys(stuck))[:5]
        if blocked:
            why += (f" in a stack that can be installed ({len(stuck)} candidate stacks that would "
                    f"clear one passed over as not installable, e.g. {blocked[0]})")
        return Plan(tuple(sorted(gated)), uncleared=tuple(sorted(gated)), other=other,
                    rules_evaluated=len(active), candidates_tried=search.tried, why=why,
                    releases=releases, truncated=search.truncated, blocked=blocked)
    (left, *_), plan, after = best
    changes = tuple(
        Change(p, installed[p], v, tuple(sorted(rid for rid in gated - after
                                                if p in gating_packages(by_id[rid], installed))))
        for p, v in sorted(plan.items()))
    remaining = tuple(sorted(after & gated))
    raised = tuple(sorted(after - before))
    why = ""
    if left:
        why = (f"no combination of up to {MAX_CHANGES} known releases ({releases.generated} "
               "data) that can be installed together clears every version-gated finding "
               "without raising another; the plan given gets closest, and what it leaves needs "
               "a config change or no release fixes it yet")
    return Plan(tuple(sorted(gated)), changes, uncleared=tuple(sorted(set(remaining) | {
                    r for r in raised if r in serious})), other=other,
                rules_evaluated=len(active), candidates_tried=search.tried,
                proof=tuple(sorted(after)), new_findings=raised, releases=releases,
                truncated=search.truncated, why=why, blocked=blocked,
                unchecked=tuple(requires.unchecked({**installed, **plan}, list(plan))))

ROUNDS = 3


class _Search:
    """Candidate stacks, smallest first; keeps the best (fewest findings left, then fewest
    changes, downgrades and release steps)."""

    def __init__(self, facts: Facts, installed: Mapping[str, str], gated: set[str],
                 before: set[str], serious: set[str], by_id: Mapping[str, Rule],
                 firing: Any, rederive: Any, releases: Releases, downgrades: bool,
                 requires: Requires) -> None:
        self.facts, self.installed, self.gated, self.before = facts, installed, gated, before
        self.serious, self.by_id, self.firing, self.rederive = serious, by_id, firing, rederive
        self.releases, self.downgrades, self.requires = releases, downgrades, requires
        self.needed: dict[str, set[str]] = {}     # package -> specifiers a candidate needs
        self.refused: list[tuple[dict[str, str], str]] = []   # (stack, why not installable)
        self.tried = 0
        self.truncated = False
        self.raised: set[str] = set()
        self.best: tuple[tuple[int, int, int, int], dict[str, str], set[str]] | None = None
        self._seen: set[tuple[tuple[str, str], ...]] = set()

    def run(self, rules: set[str]) -> bool:
        """Search with the packages and bounds of ``rules``; True once a clean plan is found."""
        installed = self.installed
        packages = sorted(set().union(*(gating_packages(self.by_id[r], installed)
                                        for r in rules)) | set(self.needed))
        cands = {p: candidates(p, installed[p], set().union(
            *(bounds(self.by_id[r], p) for r in rules if r in self.by_id)), self.releases,
            downgrades=self.downgrades) for p in packages}
        for p, specs in self.needed.items():
            # the releases that meet what a candidate required of p come first
            fit = self.requires.satisfying(p, sorted(specs), self.releases.packages.get(p, ()))
            cands[p] = list(dict.fromkeys([*fit, *cands[p]]))
        for size in range(1, min(MAX_CHANGES, len(packages)) + 1):
            for combo in itertools.combinations(packages, size):
                for versions in itertools.product(*(cands[p] for p in combo)):
                    if self.tried >= MAX_CANDIDATES:
                        self.truncated = True
                        return self._clean()
                    plan = {p: with_label(v, installed[p]) for p, v in zip(combo, versions)}
                    key = tuple(sorted(plan.items()))
                    if key in self._seen:
                        continue
                    self._seen.add(key)
                    self.tried += 1
                    if not self._installable(plan):
                        continue
                    after = self.firing(self.rederive(self.facts, plan).values)
                    new_serious = (after - self.before) & self.serious
                    self.raised |= new_serious
                    left = len(after & self.gated) + len(new_serious)
                    cost = (left, *_cost(plan, installed, cands))
                    if self.best is None or cost < self.best[0]:
                        self.best = (cost, plan, after)
            if self._clean():
                return True
        return False

    def _clean(self) -> bool:
        return self.best is not None and self.best[0][0] == 0

    def _installable(self, plan: Mapping[str, str]) -> bool:
        """Whether the stack with ``plan`` meets every recorded requirement; if not, say why
        and bring the packages that would have to move into the next round."""
        bad = self.requires.conflicts({**self.installed, **plan}, list(plan))
        if not bad:
            return True
        why = "; ".join(map(str, bad[:2]))
        self.refused.append((dict(plan), why))
        for c in bad:
            mover, spec = (c.other, c.specifier) if c.package in plan else (c.package, "")
            if mover in self.installed and mover not in plan:
                self.needed.setdefault(mover, set()).update([spec] if spec else [])
        return False


def _older(a: str, b: str) -> bool:
    ka, kb = comparison_key(a), comparison_key(b)
    return ka is not None and kb is not None and ka < kb


def _cost(plan: Mapping[str, str], installed: Mapping[str, str],
          cands: Mapping[str, Sequence[str]]) -> tuple[int, int, int]:
    downgrades = sum(1 for p, v in plan.items() if _older(v, installed[p]))
    distance = sum(list(cands[p]).index(v.split("+")[0]) if v.split("+")[0] in cands[p] else 99
                   for p, v in plan.items())
    return len(plan), downgrades, distance


def pip_line(plan: Plan) -> str:
    """The ``pip install`` line that applies the plan (quoted for a POSIX shell)."""
    parts = []
    for change in plan.changes:
        name = "transformer-engine[pytorch]" if change.package == "transformer-engine" else \
            change.package
        parts.append(f"'{name}=={change.target.split('+')[0]}'")
    line = "pip install " + " ".join(parts)
    torch = next((c for c in plan.changes if c.package == "torch"), None)
    label = torch.target.partition("+")[2] if torch else ""
    if label.startswith("cu"):
        # torch's CUDA builds live on PyTorch's own index; the rest stays on PyPI.
        line += f" --extra-index-url https://download.pytorch.org/whl/{label}"
    return line
