"""The rule engine: load declarative YAML rules, validate them, evaluate them over the facts.

- :func:`load_rules` -> :class:`RuleSet` (raises :class:`RuleLoadError` naming file:line);
- :func:`evaluate` -> :class:`Evaluation` (findings and undetermined rules);
- ``preflight.engine.commands`` implements ``fp8-doctor rules list|show|lint|test``.

The rule format is docs/rule-format.md. Modules: model (Rule, RuleSet, problems), schema (field
validation), conditions (condition trees, three-valued logic), operators (the operator table),
versions (PEP 440 / OSV policy), interpolate (messages), loader, evaluate, catalogue (docs/rules.md
and ``rules show``), commands (the CLI), packs (bundled rules plus rule packs), fixcheck (fix
round-trips in ``rules test``), environment (packages the job needs but the judged environment
lacks), strict (``--strict`` findings).
"""

from __future__ import annotations

from preflight.engine.evaluate import Evaluation, evaluate
from preflight.engine.loader import bundled_rules_dir, load_rules
from preflight.engine.model import Problem, Rule, RuleLoadError, RuleSet

__all__ = ["Evaluation", "Problem", "Rule", "RuleLoadError", "RuleSet", "bundled_rules_dir",
           "evaluate", "load_rules"]
