"""Evaluating a rule set against the facts: findings, undetermined rules, and their evidence.

The fast path calls each rule's compiled condition once. Only for a rule that fires or is
undetermined (a handful per run) does it walk the condition again to find the leaves that
decided the outcome; their facts, with provenance, become the finding's evidence, and the first
evidence that comes from a config file gives the finding its location.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from preflight.engine import regexbounds
from preflight.engine.conditions import Leaf
from preflight.engine.model import Rule, RuleSet
from preflight.facts import Facts, Unknown
from preflight.findings import Evidence, Finding, Fix, Location, Undetermined


@dataclass(frozen=True)
class Evaluation:
    """What one evaluation produced."""

    findings: list[Finding] = field(default_factory=list)
    undetermined: list[Undetermined] = field(default_factory=list)


def outcome(rule: Rule, values: Mapping[str, Any]) -> bool | None:
    """True (fires), False (quiet) or None (undetermined) for one rule."""
    return rule.when.fn(values)


def evaluate(ruleset: RuleSet, facts: Facts | Mapping[str, Any]) -> Evaluation:
    """Evaluate every active (not withdrawn) rule; findings and undetermined in rule-id order."""
    if not isinstance(facts, Facts):
        facts = Facts(dict(facts))
    values = facts.values
    findings: list[Finding] = []
    undetermined: list[Undetermined] = []
    with regexbounds.budget():     # one bounded matching budget per evaluation (issue 21)
        for rule in ruleset.rules:
            if rule.withdrawn is not None or rule.too_new is not None:
                continue
            result = rule.when.fn(values)
            if result is True:
                findings.append(finding(rule, facts))
            elif result is None:
                undetermined.append(undetermined_of(rule, facts))
    return Evaluation(findings, undetermined)


def _evidence(leaves: list[Leaf], facts: Facts, *, unknown: bool = False) -> tuple[Evidence, ...]:
    out: dict[str, Evidence] = {}
    for leaf in leaves:
        name = leaf.fact
        if name in out or name not in facts.values:
            continue  # an absent fact is no evidence of anything
        value = facts.values[name]
        if unknown and not isinstance(value, Unknown):
            # Present but unusable (e.g. version "unknown"): say why, keep the raw value visible.
            value = Unknown(leaf.reason(facts.values) or f"{value!r} cannot be compared")
        out[name] = Evidence(name, value, facts.source(name))
    return tuple(out.values())


CONTEXT_FACTS = frozenset({"intent.fp8", "intent.fp8_source", "intent.backend",
                           "intent.frameworks", "intent.stack"})
"""Facts most rules test to set the scene; a finding is placed at one only when no other
evidence has a line (the rule's ``location:`` overrides this)."""


def finding(rule: Rule, facts: Facts) -> Finding:
    """The finding of a rule that fired."""
    evidence = _evidence(rule.when.deciding(facts.values, True), facts)
    # The first config file:line among the evidence, a literal setting (config.*) before a
    # derived one (intent.* points at whichever file asked for it), and the facts that set the
    # scene of nearly every rule ("the job asks for FP8 with TE") after the one that makes this
    # rule fire: TE-0001 points at the line that turns checkpointing on, not at the fp8 flag
    # (issue 12); a bare path only if no line.
    ranked = sorted(evidence, key=lambda ev: (ev.fact != rule.location,
                                              not ev.fact.startswith("config."),
                                              ev.fact in CONTEXT_FACTS))
    locations = [loc for loc in (Location.from_source(ev.source) for ev in ranked) if loc]
    location = next((loc for loc in locations if loc.line), locations[0] if locations else None)
    return Finding(
        rule_id=rule.id,
        severity=rule.severity,
        title=rule.title,
        message=rule.message.render(facts.values).strip(),
        fix=Fix(rule.fix_template.render(facts.values).strip(), rule.fix.commands,
                rule.fix.edits),
        references=rule.references,
        evidence=evidence,
        confidence=rule.confidence,
        location=location,
        tags=rule.tags,
    )


def undetermined_of(rule: Rule, facts: Facts) -> Undetermined:
    """The undetermined record of a rule: which facts were Unknown (or unusable), and why."""
    leaves = rule.when.deciding(facts.values, None)
    return Undetermined(rule.id, rule.severity, rule.title,
                        _evidence(leaves, facts, unknown=True))
