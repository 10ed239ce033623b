"""``fp8-doctor plan`` as an API call: collect the facts as ``check`` does, then plan."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from preflight.facts import Facts
from preflight.plan.search import Plan, make_plan


def rederive(facts: Facts, versions: Mapping[str, str]) -> Facts:
    """``facts`` with ``pkg.<name>=<version>`` assumed and ``intent.*`` derived again (what
    ``check --assume`` does), so a version-dependent default is seen as the plan would set it."""
    from preflight import effective, intent
    from preflight.assume import apply_assumptions

    planned = apply_assumptions(facts, {f"pkg.{p}": v for p, v in versions.items()})
    values, prov = intent.derive(planned)
    values = {k: v for k, v in values.items() if planned.source(k) != "assume"}
    return effective.apply(planned.merged(values, prov, source="intent"))


def plan(options: object, progress: Callable[[str], None] = lambda _: None, *,
         downgrades: bool = False) -> Plan:
    """Collect facts for ``options`` (an ``api.CheckOptions``; no smoke step) and plan."""
    from preflight import engine
    from preflight.api import collect_facts

    facts, _, _, _ = collect_facts(options, progress)  # type: ignore[arg-type]
    rules = engine.load_rules(list(getattr(options, "rules_paths", ()) or ()) or None,
                              with_tests=False)
    progress(f"planning over {len(rules)} rules")
    return make_plan(facts, rules, rederive, downgrades=downgrades)
