"""Fix round-trips: a firing test case, after following the rule's fix, must be quiet.

Why (issue 12, "every fix clears its finding"): FP8D-ACC-0003 told users to move
``mixed_precision`` from the accelerate YAML to ``accelerate launch --mixed_precision fp8``;
done so, the error still fired. A rule's inline ``fire`` case may carry what following its fix
changes::

    tests:
      - facts: {config.deepspeed.fp16.enabled: true, intent.fp8: true, ...}
        expect: fire
        fixed:                       # what following the fix text changes
          set: {config.deepspeed.bf16.enabled: true}
          unset: [config.deepspeed.fp16.enabled]

``fp8-doctor rules test`` then also checks that (1) the rule is *quiet* on the fixed facts (not
undetermined: a fix that leaves the verdict open has not been shown to work) and (2) no other
rule of the loaded set fires an *error* on the fixed facts that it did not fire on the original
ones (the fix trades one error for another). ``rules lint`` warns about a rule whose condition
reads a ``config.*`` fact (its fix is, as a rule, a config change) with no such case.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from preflight.findings import Severity

if TYPE_CHECKING:
    from preflight.engine.model import FixedFacts, Reporter, Rule, RuleSet, TestCase

FactsParser = Callable[[Mapping[str, Any], tuple[Any, ...], "Reporter"], dict[str, Any]]
_KEYS = ("set", "unset")


def parse_fixed(case: Mapping[str, Any], where: tuple[Any, ...], rep: Reporter,
                parse_facts: FactsParser) -> FixedFacts | None:
    """The ``fixed:`` block of a test case, validated (facts registered, types as in ``facts``)."""
    from preflight.engine.conditions import fact_type
    from preflight.engine.model import FixedFacts

    raw = case.get("fixed")
    fwhere = (*where, "fixed")
    if not isinstance(raw, Mapping) or not raw or set(raw) - set(_KEYS):
        rep.error(fwhere, "fixed must be a mapping {set: {fact: value, ...}, unset: [fact, ...]} "
                          "(at least one of the two)")
        return None
    set_raw = raw.get("set", {})
    unset_raw = raw.get("unset", [])
    if not isinstance(set_raw, Mapping):
        rep.error((*fwhere, "set"), "fixed.set must be a mapping of fact name -> value")
        return None
    if not isinstance(unset_raw, list) or not all(isinstance(n, str) for n in unset_raw):
        rep.error((*fwhere, "unset"), "fixed.unset must be a list of fact names")
        return None
    for i, name in enumerate(unset_raw):
        fact_type(name, rep, (*fwhere, "unset", i))
    if not set_raw and not unset_raw:
        rep.error(fwhere, "fixed changes nothing: give set or unset")
        return None
    return FixedFacts(parse_facts(set_raw, (*fwhere, "set"), rep), tuple(unset_raw))


def check_fixed(rule: Rule, case: TestCase, ruleset: RuleSet) -> dict[str, Any]:
    """The result row of one fix round-trip (shape of ``rules test`` results)."""
    from preflight.engine.evaluate import outcome
    from preflight.facts import Facts

    assert case.fixed is not None
    before = Facts(dict(case.facts)).values
    after = Facts(case.fixed.apply(case.facts)).values
    got = {True: "fire", False: "quiet", None: "undetermined"}[outcome(rule, after)]
    new_errors = sorted(
        other.id for other in ruleset
        if other.id != rule.id and other.severity is Severity.ERROR
        and other.withdrawn is None and other.too_new is None
        and outcome(other, after) is True and outcome(other, before) is not True)
    ok = got == "quiet" and not new_errors
    return {"rule": rule.id, "case": f"{case.name} (fixed)", "line": case.line,
            "path": rule.path, "expected": "quiet", "got": got if not new_errors else
            f"{got}; new errors: {', '.join(new_errors)}", "ok": ok}


def needs_fixed_case(rule: Rule) -> bool:
    """A rule whose condition reads a config setting, without a ``fixed:`` round-trip case."""
    reads_config = any(name.startswith("config.") for name in rule.when.fact_names())
    return reads_config and not any(c.fixed is not None for c in rule.tests)
