"""The engine's data: compiled rules, the rule set, load problems and the load error.

A :class:`Rule` is what a rule file becomes after validation: plain metadata plus a compiled
condition (:mod:`preflight.engine.conditions`) and a compiled message template
(:mod:`preflight.engine.interpolate`). Nothing here parses or evaluates.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from preflight.errors import UserInputError
from preflight.findings import Fix, Reference, Severity

if TYPE_CHECKING:
    from preflight.base.versions import Range
    from preflight.engine.conditions import Node
    from preflight.engine.interpolate import Template


@dataclass(frozen=True)
class Problem:
    """One defect in a rule file: an ``error`` stops loading, a ``warning`` does not."""

    path: str
    line: int | None
    message: str
    level: str = "error"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        prefix = "" if self.level == "error" else f"{self.level}: "
        return f"{where}: {prefix}{self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "level": self.level, "message": self.message}


class RuleLoadError(UserInputError):
    """A rule file that cannot be used; ``str()`` names file and line. ``problems`` has them all."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        first = problems[0]
        more = f" (and {len(problems) - 1} more problem(s); run `fp8-doctor rules lint`)" \
            if len(problems) > 1 else ""
        super().__init__(f"{first}{more}")


@dataclass(frozen=True)
class Affected:
    """OSV-shaped affected package: its name and ranges (for humans and the catalogue)."""

    package: str
    ranges: tuple[Range, ...]


@dataclass(frozen=True)
class TestCase:
    """One inline rule test: facts (absent = not listed; Unknown via ``{$unknown: why}``)."""

    facts: Mapping[str, Any]
    expect: str          # fire | quiet | undetermined
    name: str
    line: int | None
    fixed: FixedFacts | None = None   # a fire case after following the fix (engine/fixcheck.py)


@dataclass(frozen=True)
class FixedFacts:
    """What following a rule's fix changes in a firing case: facts set, facts removed."""

    set: Mapping[str, Any]
    unset: tuple[str, ...] = ()

    def apply(self, facts: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in facts.items() if k not in self.unset}
        out.update(self.set)
        return out


@dataclass(frozen=True)
class Rule:
    """One validated, compiled rule."""

    id: str
    title: str
    severity: Severity
    confidence: str
    when: Node
    message: Template
    fix: Fix
    fix_template: Template
    references: tuple[Reference, ...]
    path: str
    raw: Mapping[str, Any] = field(repr=False, compare=False)
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    affected: tuple[Affected, ...] = ()
    tests: tuple[TestCase, ...] = ()
    withdrawn: str | None = None
    modified: str | None = None
    published: str | None = None
    details: str | None = None
    help_uri: str | None = None
    schema_version: str = "1.0"
    min_tool_version: str | None = None
    too_new: str | None = None
    """min_tool_version when it is newer than this fp8-doctor: the rule is not evaluated."""
    location: str | None = None
    """The fact whose ``file:line`` provenance places a finding; else the first config fact's."""
    read_at: tuple[str, ...] = ()
    """``owner/repo@tag-or-commit`` whose source was read to write (or re-check) the rule."""
    measured: tuple[tuple[str, str], ...] = ()
    """``(("device", ...), ("date", ...))`` for ``confidence: measured``."""

    @property
    def area(self) -> str:
        """``FP8D-ACC-0001`` -> ``ACC`` (``OTHER`` for ids outside the FP8D scheme)."""
        parts = self.id.split("-")
        return parts[1] if len(parts) == 3 and parts[0] == "FP8D" else "OTHER"

    def facts_used(self) -> list[str]:
        """Fact names named in the condition, in order of first use."""
        return self.when.fact_names()


@dataclass(frozen=True)
class RuleSet:
    """A frozen, ordered collection of compiled rules, by id, plus the load warnings."""

    rules: tuple[Rule, ...]
    warnings: tuple[Problem, ...] = ()
    sources: tuple[str, ...] = ()
    _by_id: Mapping[str, Rule] = field(default_factory=dict, repr=False, compare=False)
    skipped: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    """Rules not built because they are quiet on the facts of this check (their index gate; see
    preflight/engine/index.py), by id and alias -> id. They count in ``len`` and ``in``; only
    ``load_rules(present=...)`` makes them, for one evaluation of those facts."""

    def __post_init__(self) -> None:
        if not self._by_id:
            index: dict[str, Rule] = {}
            for rule in self.rules:
                index[rule.id] = rule
                for alias in rule.aliases:
                    index.setdefault(alias, rule)
            object.__setattr__(self, "_by_id", index)

    def __len__(self) -> int:
        return len(self.rules) + len(set(self.skipped.values()))

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._by_id or rule_id in self.skipped

    def canonical(self, rule_id: str) -> str | None:
        """The id of the rule this id or alias names, built or skipped; None when none does."""
        rule = self._by_id.get(rule_id)
        return rule.id if rule is not None else self.skipped.get(rule_id)

    def get(self, rule_id: str) -> Rule | None:
        """The rule with this id (or alias), or None."""
        return self._by_id.get(rule_id)

    def __getitem__(self, rule_id: str) -> Rule:
        return self._by_id[rule_id]

    @property
    def active(self) -> tuple[Rule, ...]:
        """Rules that are evaluated (not withdrawn)."""
        return tuple(r for r in self.rules if r.withdrawn is None and r.too_new is None)


_NUMBER = re.compile(r"(?<![\w.\"'])\d+(?:\.\d+)+(?![\w.\"'])")


class Reporter:
    """Collects :class:`Problem` s for one file, turning key paths into line numbers."""

    def __init__(self, path: str, line_of: Callable[[tuple[Any, ...]], int | None], text: str = "") -> None:
        self.path = path
        self._line_of = line_of          # yamlsafe.Loaded.line_of
        self._text = text
        self.problems: list[Problem] = []

    def as_written(self, where: tuple[Any, ...], value: Any) -> str:
        """How a number was written in the file (``2.10``, which YAML read as 2.1), if findable.

        Used only to make "quote your version" messages show the user's own text.
        """
        line = self.line(where)
        if isinstance(value, float) and line and self._text:
            rows = self._text.splitlines()
            if line <= len(rows):
                for number in _NUMBER.finditer(rows[line - 1]):
                    if float(number[0]) == value:
                        return number[0]
        return repr(value)

    def line(self, where: tuple[Any, ...]) -> int | None:
        return self._line_of(where)

    def unquoted_number(self, where: tuple[Any, ...], value: Any
                        ) -> tuple[tuple[Any, ...], str] | None:
        """The first number inside ``value`` (a version that YAML read as a number), if any."""
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            return where, self.as_written(where, value)
        items = value.items() if isinstance(value, Mapping) else (
            enumerate(value) if isinstance(value, list) else ())
        for key, item in items:
            found = self.unquoted_number((*where, key), item)
            if found:
                return found
        return None

    def error(self, where: tuple[Any, ...], message: str) -> None:
        self.problems.append(Problem(self.path, self.line(where), message, "error"))

    def warn(self, where: tuple[Any, ...], message: str) -> None:
        self.problems.append(Problem(self.path, self.line(where), message, "warning"))

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.level == "error"]
