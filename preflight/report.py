"""The Report: everything one run found, and the JSON contract built from it.

A Report is immutable data. Rendering lives in ``preflight.render``; the exit code is a pure
function of the findings and ``--fail-on``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from preflight import __version__
from preflight.facts import Facts, facts_to_json
from preflight.findings import (
    FailOn,
    Finding,
    Severity,
    Undetermined,
    at_or_above,
    reading_order,
)
from preflight.probes.base import ProbeResult

if TYPE_CHECKING:
    from preflight.environment import EnvironmentJudged

JSON_SCHEMA_VERSION = "1.0"

from preflight.outputs import (  # noqa: E402,F401 - the exit codes, defined once there
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
)


@dataclass(frozen=True)
class Report:
    """Facts, findings and smoke results of one check."""

    facts: Facts
    findings: tuple[Finding, ...] = ()
    undetermined: tuple[Undetermined, ...] = ()
    probes: tuple[ProbeResult, ...] = ()
    smoke: dict[str, Any] | None = None
    rules_evaluated: int = 0
    fail_on: FailOn | str = FailOn.ERROR
    inputs: tuple[str, ...] = field(default_factory=tuple)
    """Config files / snapshot / assumptions the run used, as shown to the user."""
    environment: EnvironmentJudged | None = None
    """Whether the environment judged is the training environment (None: not judged, e.g. a
    live ``inspect``, which runs inside the training process)."""
    strict: bool = False
    """``--strict``: undetermined rules and an FP8 job's smoke step that could not run became
    findings (``FP8D-STRICT-*``) when the report was built."""
    baselined: tuple[Finding, ...] = ()
    """Findings the ``--baseline`` file accepted: shown, never counted for the exit code."""
    ignored: tuple[str, ...] = ()
    """Rule ids ``--ignore`` dropped from ``findings`` and ``undetermined``."""
    job_read: bool | None = None
    """Whether a job config was read (False: the check judged this machine only, and says so;
    None: not a job check, e.g. a live ``inspect``)."""

    def summary(self) -> dict[str, int]:
        """Counts of fired findings per severity."""
        counts = {s.value: 0 for s in Severity}
        for f in self.findings:
            counts[f.severity.value] += 1
        return counts

    def ok(self, fail_on: FailOn | str | None = None) -> bool:
        """True when no finding reaches ``fail_on`` (default: the report's own threshold)."""
        threshold = fail_on or self.fail_on
        return not any(at_or_above(f.severity, threshold) for f in self.findings)

    def exit_code(self, fail_on: FailOn | str | None = None) -> int:
        """0 when :meth:`ok`, else 1 (DESIGN.md exit-code contract)."""
        return EXIT_OK if self.ok(fail_on) else EXIT_FINDINGS

    def sorted_findings(self) -> list[Finding]:
        """The findings in reading order (:func:`preflight.findings.reading_order`: by impact,
        then severity, then id): the one order of the JSON document and every renderer."""
        return _ordered(self.findings)

    def to_dict(self) -> dict[str, Any]:
        """The ``--format json`` document (contract: the top-level keys), **not redacted**.

        Raw on purpose: this is the data API (code that inspects a report in-process needs the
        real values, e.g. to compare a path), and redaction is a property of *output*. Every
        way out of the process redacts by default: :meth:`render` (all formats),
        ``preflight.render.document(report)`` (the redacted dict), snapshots, the CLI, and
        ``str(PreflightError)``. Use one of those before writing this dict anywhere.
        """
        facts_json = facts_to_json(self.facts)
        return {
            "schema_version": JSON_SCHEMA_VERSION,
            "tool": {"name": "fp8-doctor", "version": __version__},
            "inputs": list(self.inputs),
            "facts": facts_json["facts"],
            "provenance": facts_json["provenance"],
            "probes": [p.to_dict() for p in self.probes],
            "findings": [_finding_dict(f) for f in self.sorted_findings()],
            "undetermined": [u.to_dict() for u in sorted(self.undetermined,
                                                         key=lambda u: u.rule_id)],
            "smoke": self.smoke,
            "rules_evaluated": self.rules_evaluated,
            "summary": self.summary(),
            "environment": self.environment.to_dict() if self.environment else None,
            "strict": self.strict,
            "baselined": [_finding_dict(f) for f in _ordered(self.baselined)],
            "ignored": list(self.ignored),
            "job_read": self.job_read,
            "exit_code": self.exit_code(),
        }

    def render(self, fmt: str = "text", *, redact: bool = True, color: bool = False) -> str:
        """Render with one of the formats in ``preflight.render`` (text, json, markdown, sarif)."""
        from preflight.render import render

        return render(self, fmt, redact=redact, color=color)


def _ordered(findings: tuple[Finding, ...]) -> list[Finding]:
    return sorted(findings, key=lambda f: reading_order(f.severity, f.tags, f.rule_id))


def _finding_dict(finding: Finding) -> dict[str, Any]:
    """A finding of the document: :meth:`Finding.to_dict` plus its ``impact`` (what renderers
    group by; snapshots store findings without it, it is derived)."""
    return {**finding.to_dict(), "impact": finding.impact.value}
