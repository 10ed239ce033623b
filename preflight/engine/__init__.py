"""The rule engine: load declarative YAML rules, validate them, evaluate them over the facts.

- :func:`load_rules` -> :class:`RuleSet` (raises :class:`RuleLoadError` naming file:line);
- :func:`evaluate` -> :class:`Evaluation` (findings and undetermined rules).

The rule format is docs/rule-format.md. Modules: model (Rule, RuleSet, problems), schema (field
validation), conditions (condition trees, three-valued logic), operators (the operator table),
interpolate (messages), loader, index (the wheel's precomputed rule index), evaluate, packs
(bundled rules plus rule packs), vocab (closed vocabularies), regexbounds (``matches`` budgets);
tools over the rule base: catalogue (docs/rules.md and ``rules show``), ledger
(docs/coverage.md), evidence (``rules lint``), fixcheck (fix round-trips in ``rules test``),
fixedits and fixcommands (a fix's edits and commands).

The engine imports only :mod:`preflight.facts`, :mod:`preflight.findings`,
:mod:`preflight.errors` and the floor :mod:`preflight.base` (versions and compute capabilities
are there; tests/test_layers.py). Its command line is :mod:`preflight.commands.rules`; what a
check decides around it (environment, ``--strict``) is :mod:`preflight.environment` and
:mod:`preflight.strict`, beside :mod:`preflight.api`.
"""

from __future__ import annotations

from preflight.engine.evaluate import Evaluation, evaluate
from preflight.engine.loader import bundled_rules_dir, load_rules
from preflight.engine.model import Problem, Rule, RuleLoadError, RuleSet

__all__ = ["Evaluation", "Problem", "Rule", "RuleLoadError", "RuleSet", "bundled_rules_dir",
           "evaluate", "load_rules"]
