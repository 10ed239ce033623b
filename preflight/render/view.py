"""The typed view every human and code-scanning format renders: built once from the document.

Why (issue 25 item 2): text, Markdown and SARIF each read the report's ``dict[str, Any]``,
classified findings from their tags, read about thirty fact names to describe the environment
and judged the smoke step again. :func:`build_view` now turns the sanitized, redacted document
(``render.render_document``) into a frozen :class:`ReportView` once: findings with their
:class:`~preflight.findings.Impact` in the one reading order, environment rows, the smoke step's
verdict per check (as :mod:`preflight.registry.smoke_verdict` states it), inputs, the notice and the
summary. JSON stays the document itself (it gains ``impact`` per finding). Every key of the
document is optional here, as it is for the renderers (an older snapshot's document).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from preflight.findings import Impact, Severity, reading_order
from preflight.registry.smoke_verdict import FAIL, SmokeCheck, smoke_checks, smoke_headline
from preflight.render import _common as c
from preflight.render.envrows import EnvironmentRow, environment_rows
from preflight.render.undetermined import Group, groups

IMPACT_TITLES = {Impact.BLOCKS: "Stops or breaks the job",
                 Impact.NO_FP8: "FP8 silently not applied", Impact.OTHER: "Other findings"}


@dataclass(frozen=True)
class EvidenceView:
    """A fact a finding rests on (or an undetermined rule needs): name, JSON value, source."""

    fact: str
    value: Any
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """As the document writes it (SARIF's ``properties`` carry it)."""
        return {"fact": self.fact, "value": self.value, "source": self.source}


@dataclass(frozen=True)
class ReferenceView:
    type: str
    url: str


@dataclass(frozen=True)
class FindingView:
    """One finding, typed."""

    id: str
    severity: Severity
    impact: Impact
    title: str
    message: str
    confidence: str
    location: str | None          # "path:line" or "path"
    path: str | None
    line: int | None
    fix_text: str
    fix_commands: tuple[str, ...]
    references: tuple[ReferenceView, ...]
    evidence: tuple[EvidenceView, ...]
    tags: tuple[str, ...]


@dataclass(frozen=True)
class UndeterminedView:
    """A rule that could not be decided, and the unknown facts it needs."""

    id: str
    severity: Severity
    title: str
    unknown: tuple[EvidenceView, ...]


@dataclass(frozen=True)
class ProbeView:
    name: str
    status: str
    facts: Any
    seconds: Any
    reason: str


@dataclass(frozen=True)
class SmokeView:
    """The smoke step: its status line, the verdict per check, the raw details as rows."""

    shown: bool                  # False in a live inspection, which has no smoke step
    status: str                  # "ok on H100", "skipped: ...", "not run"
    headline: str                # the status with the count of checks passed
    failed: bool                 # it ran and did not end "ok"
    ok: bool                     # it ran and ended "ok"
    checks: tuple[SmokeCheck, ...]
    details: tuple[tuple[str, str], ...]

    @property
    def missed(self) -> bool:
        """A measured value missed its threshold."""
        return any(c.verdict == FAIL for c in self.checks)


@dataclass(frozen=True)
class ReportView:
    """Everything a renderer shows, typed; built by :func:`build_view`."""

    tool_name: str
    tool_version: str
    redacted: bool
    notice: str | None
    findings: tuple[FindingView, ...]
    accepted: tuple[FindingView, ...]
    ignored: tuple[str, ...]
    undetermined: tuple[UndeterminedView, ...]
    undetermined_groups: tuple[Group, ...]
    unknown_reasons: tuple[tuple[str, tuple[str, ...]], ...]
    smoke: SmokeView
    inputs: tuple[str, ...]
    unreadable: tuple[str, ...]
    inputs_summary: str | None
    environment: tuple[EnvironmentRow, ...]
    place: str | None
    facts: Mapping[str, Any]
    provenance: Mapping[str, Any]
    probes: tuple[ProbeView, ...]
    counts: Mapping[str, int]
    summary_line: str
    rules_evaluated: int
    exit_code: int
    fail_on: str
    job_read: bool | None

    @property
    def worst(self) -> Severity | None:
        """The highest severity the summary counts, if any."""
        return next((s for s in Severity if self.counts.get(s.value)), None)


def _evidence(items: Any) -> tuple[EvidenceView, ...]:
    return tuple(EvidenceView(str(e["fact"]), e.get("value"), e.get("source"))
                 for e in items or [] if isinstance(e, dict))


def finding_view(f: Mapping[str, Any]) -> FindingView:
    """A finding of the document, typed (its impact from severity and tags, as the document's
    ``impact`` says for a document written by this version)."""
    sev = Severity(f.get("severity", "info"))
    tags = tuple(str(t) for t in f.get("tags") or ())
    fix = f.get("fix") or {}
    loc = f.get("location") or {}
    return FindingView(
        id=str(f.get("id", "")), severity=sev, impact=Impact.of(sev, tags),
        title=str(f.get("title", "")), message=str(f.get("message", "")),
        confidence=str(f.get("confidence", "verified")), location=c.location_text(f),
        path=str(loc["path"]) if loc else None, line=loc.get("line") if loc else None,
        fix_text=str(fix.get("text") or ""),
        fix_commands=tuple(str(x) for x in fix.get("commands") or ()),
        references=tuple(ReferenceView(str(r["type"]), str(r["url"]))
                         for r in f.get("references") or ()),
        evidence=_evidence(f.get("evidence")), tags=tags)


def ordered(items: Any) -> tuple[FindingView, ...]:
    """The document's findings as views, in the one reading order
    (:func:`preflight.findings.reading_order`; the document is written in it already)."""
    views = [finding_view(f) for f in items or [] if isinstance(f, dict)]
    return tuple(sorted(views, key=lambda v: reading_order(v.severity, v.tags, v.id)))


def _smoke(doc: Mapping[str, Any]) -> SmokeView:
    facts = doc.get("facts") or {}
    status, rows = c.smoke_rows(dict(doc))
    shown = not (facts.get("runtime.inspected") is True and "smoke.ran" not in facts
                 and not doc.get("smoke"))
    return SmokeView(
        shown=shown, status=status, headline=smoke_headline(facts),
        failed=facts.get("smoke.status") not in (None, "ok") and facts.get("smoke.ran") is not False,
        ok=facts.get("smoke.status") == "ok", checks=tuple(smoke_checks(facts)),
        details=tuple(rows))


def build_view(doc: Mapping[str, Any]) -> ReportView:
    """The view of a (sanitized, redacted) report document."""
    d = dict(doc)
    tool = d.get("tool") or {}
    env = d.get("environment")
    return ReportView(
        tool_name=str(tool.get("name", "fp8-doctor")), tool_version=str(tool.get("version", "")),
        redacted=bool(d.get("redacted", True)), notice=c.environment_notice(d),
        findings=ordered(d.get("findings")), accepted=ordered(d.get("baselined")),
        ignored=tuple(c.ignored_ids(d)),
        undetermined=tuple(UndeterminedView(str(u.get("id", "")),
                                            Severity(u.get("severity", "info")),
                                            str(u.get("title", "")), _evidence(u.get("unknown")))
                           for u in d.get("undetermined") or [] if isinstance(u, dict)),
        undetermined_groups=tuple(groups(d)),
        unknown_reasons=tuple((r, tuple(n)) for r, n in c.unknown_reasons(d)),
        smoke=_smoke(d), inputs=tuple(c.config_inputs(d)),
        unreadable=tuple(c.unreadable_configs(d)), inputs_summary=c.inputs_summary(d),
        environment=environment_rows(d.get("facts") or {}),
        place=str(env["place"]) if isinstance(env, dict) and env.get("place") else None,
        facts=d.get("facts") or {}, provenance=d.get("provenance") or {},
        probes=tuple(ProbeView(str(p.get("name", "")), str(p.get("status", "")),
                               p.get("facts", "?"), p.get("seconds", "?"),
                               str(p.get("reason") or ""))
                     for p in d.get("probes") or [] if isinstance(p, dict)),
        counts={k: int(v) for k, v in (d.get("summary") or {}).items()
                if isinstance(v, int) and not isinstance(v, bool)},
        summary_line=c.summary_line(d), rules_evaluated=int(d.get("rules_evaluated", 0)),
        exit_code=int(d.get("exit_code", 0)), fail_on=c.fail_on(d), job_read=d.get("job_read"))
