"""The one place a Report is built from facts: the rule engine over them, then ``--ignore``,
``--strict``, off-node downgrades and the baseline (split from ``api.py``, which sequences the
pipeline and re-exports :func:`evaluate_facts`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from preflight.builtin_findings import BUILTIN_IDS
from preflight.errors import UserInputError
from preflight.facts import Facts
from preflight.findings import FailOn, Finding, at_or_above
from preflight.probes.base import ProbeResult
from preflight.report import Report

if TYPE_CHECKING:
    from preflight.baseline import Baseline
    from preflight.environment import EnvironmentJudged


Progress = Callable[[str], None]


def _silent(_: str) -> None:
    """The library API stays quiet; the CLI passes a stderr printer instead."""


def evaluate_facts(facts: Facts, *, rules_paths: Sequence[str] = (),
                   extra: Sequence[Finding] = (), probes: Sequence[ProbeResult] = (),
                   smoke: dict[str, Any] | None = None, fail_on: FailOn | str = FailOn.ERROR,
                   inputs: Sequence[str] = (), progress: Progress = _silent,
                   environment: EnvironmentJudged | None = None,
                   strict: bool = False, rule_packs: Sequence[str] = (),
                   ignore: Sequence[str] = (), baseline: Baseline | None = None,
                   job_read: bool | None = None) -> Report:
    """Run the rule engine over ``facts`` and assemble the :class:`Report`.

    The one place a Report is built from facts: ``check``, ``preflight.inspect`` and
    ``preflight.cluster`` all end here. ``rules_paths`` replaces the bundled rule base (what
    ``preflight.inspect`` uses for the runtime rules), ``rule_packs`` add to it; naming folders
    that hold no rule at all is a usage error (a gate that checks nothing must not pass).
    ``ignore``: rule ids (or aliases) whose findings and undetermined results are dropped; an id
    no rule or finding has is a usage error (a typo must not pass silently). ``baseline``:
    matching findings move to ``Report.baselined``.
    ``strict``: undetermined rules at or above ``fail_on`` become one ``FP8D-STRICT-UNDETERMINED``
    error finding. ``fail_on`` is checked here too, before any rule runs. ``environment``: where
    the facts were judged; off the training node, errors that hold only there are warnings
    (``engine.environment.off_node``; not under ``strict``). ``job_read``: whether a job config
    was read (None: not a job check, e.g. ``preflight.inspect``).
    """
    from preflight import engine
    from preflight.engine.packs import load_check_rules
    from preflight.environment import off_node

    fail_on = FailOn.parse(fail_on)

    # A check never runs the rules' inline tests: skip parsing them (about half the YAML).
    names = frozenset(facts.values if isinstance(facts, Facts) else facts)
    rules = load_check_rules(list(rules_paths), bundled=False) if rules_paths else \
        load_check_rules(list(rule_packs), bundled=True, present=names)
    for warning in rules.warnings:
        # Unknown keys, rules that need a newer fp8-doctor: worth a line, never fatal.
        progress(f"rule warning: {warning}")
    if len(rules) == 0:
        raise engine.loader.no_rule_files(list(rules_paths))
    result = engine.evaluate(rules, facts)
    dropped = _ignored_ids(ignore, rules, [*extra, *result.findings])
    extra = [f for f in extra if f.rule_id not in dropped]
    fired = [f for f in result.findings if f.rule_id not in dropped]
    undetermined = [u for u in result.undetermined if u.rule_id not in dropped]
    strict_findings: tuple[Finding, ...] = ()
    if strict:
        blocking = [u for u in undetermined if at_or_above(u.severity, fail_on)]
        from preflight.strict import undetermined_finding

        strict_findings = (undetermined_finding(blocking, fail_on),) if blocking else ()
    findings = off_node(tuple(extra) + strict_findings + tuple(fired), environment,
                        strict=strict)
    baselined: tuple[Finding, ...] = ()
    if baseline is not None:
        findings, baselined = baseline.split(findings)
    return Report(
        facts=facts,
        findings=findings,
        undetermined=tuple(undetermined),
        probes=tuple(probes),
        smoke=smoke,
        rules_evaluated=len(rules),
        fail_on=fail_on.value,
        inputs=tuple(inputs),
        environment=environment,
        strict=strict,
        baselined=baselined,
        ignored=tuple(sorted(dropped)),
        job_read=job_read,
    )


def _ignored_ids(ignore: Sequence[str], rules: Any, findings: Sequence[Finding]) -> set[str]:
    """The rule ids ``ignore`` names (aliases resolved); an unknown one is a usage error."""
    out: set[str] = set()
    produced = {f.rule_id for f in findings}
    for name in ignore:
        rule_id = rules.canonical(name)
        if rule_id is not None:
            out.add(rule_id)
        elif name in produced or name in BUILTIN_IDS:
            out.add(name)
        else:
            raise UserInputError(f"--ignore {name}: no rule or finding has this id "
                                 "(see `fp8-doctor rules list`)")
    return out
