"""What evaluation produces: findings (a rule fired) and undetermined results (a rule could not tell).

These are the values renderers, the exit code and the Python API consume. They carry no behaviour
beyond small conveniences, and every field is JSON-friendly through :meth:`to_dict`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from preflight.errors import UserInputError
from preflight.facts import Unknown, decode_value, encode_value


class Severity(str, enum.Enum):
    """How bad a finding is. Ordered: error > warning > info."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]


class FailOn(str, enum.Enum):
    """The ``--fail-on`` threshold, parsed once where it enters (CLI, API, callbacks).

    Why (issue 14): a bad string used to pass silently until a finding existed to compare it
    with, so ``evaluate_facts(..., fail_on="warnings")`` on a clean report returned "ok".
    """

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    NEVER = "never"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: FailOn | str) -> FailOn:
        """The enum for ``value``; a clear :class:`UserInputError` for anything else."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            try:
                return cls(value)
            except ValueError:
                pass
        raise UserInputError(f"fail_on must be one of {', '.join(FAIL_ON_CHOICES)}, "
                             f"not {value!r}")


FAIL_ON_CHOICES = tuple(f.value for f in FailOn)


class Impact(str, enum.Enum):
    """What a finding does to the job: the order a person acts on findings in (issue 12 item 5).

    ``BLOCKS``: an error that stops the job or breaks its training; ``NO_FP8``: the job runs but
    FP8 is silently not applied (rules tagged ``silent-no-fp8``, the documented tag;
    ``silent-bf16`` is read as the same), whatever the severity; ``OTHER``: the rest. Derived
    from a rule's severity and tags, so a rule author chooses it with data and a rule pack needs
    no new field. Declaration order is reading order.
    """

    BLOCKS = "blocks"
    NO_FP8 = "no-fp8"
    OTHER = "other"

    @classmethod
    def of(cls, severity: Severity | str, tags: Iterable[str]) -> Impact:
        """The class of a finding with this severity and these tags."""
        if NO_FP8_TAGS.intersection(tags):
            return cls.NO_FP8
        return cls.BLOCKS if Severity(severity) is Severity.ERROR else cls.OTHER

    @property
    def rank(self) -> int:
        """0 for what is read first."""
        return list(Impact).index(self)


NO_FP8_TAGS = frozenset({"silent-no-fp8", "silent-bf16"})
"""Tags that put a finding under :attr:`Impact.NO_FP8`."""


def reading_order(severity: Severity | str, tags: Iterable[str], rule_id: str
                  ) -> tuple[int, int, str]:
    """The one sort key of findings (JSON, every renderer, ``--fail-on`` messages): by impact,
    then severity (errors first), then id, so golden files stay stable."""
    return (Impact.of(severity, tags).rank, -Severity(severity).rank, rule_id)


def at_or_above(severity: Severity, fail_on: FailOn | str) -> bool:
    """True when ``severity`` reaches the ``--fail-on`` threshold."""
    threshold = FailOn.parse(fail_on)
    if threshold is FailOn.NEVER:
        return False
    return severity.rank >= Severity(threshold.value).rank


@dataclass(frozen=True)
class Reference:
    """A typed link (OSV vocabulary: REPORT, FIX, ADVISORY, ARTICLE, WEB, PACKAGE, DOCS, SOURCE)."""

    type: str
    url: str


@dataclass(frozen=True)
class Fix:
    """What to do: prose, plus commands that are safe to run as printed, plus the config edits
    that carry the fix out (``fp8-doctor check --diff``)."""

    text: str
    commands: tuple[str, ...] = ()
    edits: tuple[EditSpec, ...] = ()


@dataclass(frozen=True)
class EditSpec:
    """One change to a config file a fix makes: ``action`` is ``set`` (to ``value``) or
    ``delete``, on the key or flag behind the ``config.<kind>.<key>`` fact ``fact``."""

    fact: str
    action: str
    value: Any = None


@dataclass(frozen=True)
class Evidence:
    """One fact that made a rule fire (or left it undetermined), with where it came from."""

    fact: str
    value: Any
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"fact": self.fact, "value": encode_value(self.value), "source": self.source}


class Source(str):
    """Where a config value was read: the text ``path:line`` (what snapshots, JSON and the reports
    show, so it stays a ``str``), with ``path`` and ``line`` kept as values, so a location is never
    re-parsed from the text (a path may itself hold ``:12``). A replayed snapshot gives plain
    strings, which :meth:`Location.from_source` still parses."""

    path: str
    line: int | None

    def __new__(cls, path: str, line: int | None = None) -> Source:
        obj = super().__new__(cls, f"{path}:{line}" if line else path)
        obj.path, obj.line = path, line
        return obj


@dataclass(frozen=True)
class Location:
    """A place in a config file."""

    path: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    # `path:line`, or `path:line (note)` (reading/pyenviron.Noted: an environment default)
    _RE = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?: \([^()]*\))?$")

    @classmethod
    def from_source(cls, source: str | None) -> Location | None:
        """Parse a provenance string like ``/job/ds.json:12``; None when it is not a file."""
        if not source:
            return None
        if isinstance(source, Source):
            return cls(source.path, source.line)
        m = cls._RE.match(source)
        if m:
            return cls(m.group("path"), int(m.group("line")))
        if "/" in source or source.endswith((".yaml", ".yml", ".json", ".toml", ".sh")):
            return cls(source, None)
        return None


@dataclass(frozen=True)
class Finding:
    """A rule that fired (or a problem found outside the rules, such as an unparseable config)."""

    rule_id: str
    severity: Severity
    title: str
    message: str
    fix: Fix
    references: tuple[Reference, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    confidence: str = "verified"
    location: Location | None = None
    tags: tuple[str, ...] = ()

    @property
    def impact(self) -> Impact:
        """What the finding does to the job (:class:`Impact`)."""
        return Impact.of(self.severity, self.tags)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.rule_id,
            "severity": self.severity.value,
            "title": self.title,
            "message": self.message,
            "confidence": self.confidence,
            "fix": {"text": self.fix.text, "commands": list(self.fix.commands),
                    **({"edits": [{"fact": e.fact, "action": e.action, "value": e.value}
                                  for e in self.fix.edits]} if self.fix.edits else {})},
            "references": [{"type": r.type, "url": r.url} for r in self.references],
            "evidence": [e.to_dict() for e in self.evidence],
            "location": (
                {"path": self.location.path, "line": self.location.line} if self.location else None
            ),
            "tags": list(self.tags),
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Finding:
        """Inverse of :meth:`to_dict` (a finding stored in a snapshot); raises on bad shapes."""
        loc = doc.get("location")
        fix = doc.get("fix") or {}
        return cls(
            rule_id=str(doc["id"]),
            severity=Severity(doc["severity"]),
            title=str(doc.get("title", "")),
            message=str(doc.get("message", "")),
            fix=Fix(str(fix.get("text", "")), tuple(str(c) for c in fix.get("commands", ()))),
            references=tuple(Reference(str(r["type"]), str(r["url"]))
                             for r in doc.get("references", ())),
            evidence=tuple(Evidence(str(e["fact"]), decode_value(e.get("value")), e.get("source"))
                           for e in doc.get("evidence", ())),
            confidence=str(doc.get("confidence", "verified")),
            location=Location(str(loc["path"]), loc.get("line")) if loc else None,
            tags=tuple(str(t) for t in doc.get("tags", ())),
        )


@dataclass(frozen=True)
class Undetermined:
    """A rule that could neither fire nor stay quiet because facts it needs are Unknown."""

    rule_id: str
    severity: Severity
    title: str
    unknown: tuple[Evidence, ...] = field(default_factory=tuple)

    @property
    def reasons(self) -> list[str]:
        return [
            f"{e.fact}: {e.value.reason if isinstance(e.value, Unknown) else e.value}"
            for e in self.unknown
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.rule_id,
            "severity": self.severity.value,
            "title": self.title,
            "unknown": [e.to_dict() for e in self.unknown],
        }
