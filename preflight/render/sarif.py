"""``--format sarif``: SARIF 2.1.0 for code-scanning UIs (GitHub, GitLab, VS Code SARIF viewer).

One run, one ``reportingDescriptor`` per rule that fired or stayed undetermined, one result per
finding, in the order a person acts on them (``preflight.findings.reading_order``). Locations:

- a config path under the directory fp8-doctor ran in (``srcroot``; the repository root in CI)
  is a relative URI with ``uriBaseId: "%SRCROOT%"``, so GitHub code scanning places the
  annotation in the repository whatever the runner's checkout path (SARIF 3.4.4; GitHub's
  upload-sarif resolves %SRCROOT% to the checkout); a relative path as given is relative to it
  too; an absolute path elsewhere stays a ``file://`` URI.
- findings with no config involved (the machine, the installed packages) carry no location, as
  the SARIF spec allows (pip-audit's maintainers chose the same in pypa/pip-audit#206).

Results come in reading order, each with ``properties.impact`` (blocks | no-fp8 | other, see
:class:`preflight.findings.Impact`) and ``partialFingerprints`` (rule id, file and the facts that fired it; not
the line, which moves when the file is edited), so code scanning tracks one alert across runs
and machines.
Undetermined rules are not results - they are neither pass nor fail of the code - but
``toolExecutionNotifications`` of the invocation (level ``note``, ``associatedRule`` pointing at
the rule), so they are visible without opening alerts.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from preflight.render.view import FindingView, ReportView, UndeterminedView, build_view

if TYPE_CHECKING:
    from preflight.render import Options

SCHEMA_URI = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
              "sarif-schema-2.1.0.json")
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "fp8DoctorFinding/v1"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _relative_to(path: str, roots: tuple[str, ...]) -> str | None:
    for root in roots:
        root = root.rstrip("/\\")
        if root and (path == root or path.startswith(root + "/") or
                     path.startswith(root + os.sep)):
            return path[len(root):].lstrip("/\\") or "."
    return None


def artifact_location(path: str, roots: tuple[str, ...] = ()) -> dict[str, Any]:
    """The ``artifactLocation`` of a config path. ``roots``: the run directory as written in the
    document (raw and, when redacted, with the home shown as ``~``)."""
    posix = path.replace(os.sep, "/") if os.sep != "/" else path
    rel = _relative_to(posix, tuple(r.replace(os.sep, "/") for r in roots))
    drive = len(posix) > 1 and posix[1] == ":"          # C:/... on Windows
    if rel is None and not posix.startswith(("/", "~")) and not drive:
        rel = posix                      # relative as given: relative to the run directory
    if rel is not None:
        rel = posixpath.normpath(rel)
        if rel != ".." and not rel.startswith("../"):
            return {"uri": quote(rel), "uriBaseId": SRCROOT}
    return {"uri": artifact_uri(path)}


def artifact_uri(path: str) -> str:
    """A URI reference for a path with no base: ``file://`` for absolute paths, else relative."""
    if path.startswith("/"):
        return "file://" + quote(path)
    if path.startswith("~"):
        # A redacted home-relative path: keep it readable as a relative reference.
        return quote(path)
    return quote(path.replace(os.sep, "/"))


def fingerprint(finding: FindingView, uri: str) -> str:
    """Stable across runs, machines and edits that move lines: rule, file, deciding facts."""
    facts = sorted(e.fact for e in finding.evidence)
    text = "\0".join([finding.id, uri, *facts])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _rule(entry: FindingView | UndeterminedView) -> dict[str, Any]:
    finding = entry if isinstance(entry, FindingView) else None
    fix_text = finding.fix_text if finding else ""
    commands = finding.fix_commands if finding else ()
    refs = finding.references if finding else ()
    help_lines = [fix_text] + [f"$ {c}" for c in commands]
    help_lines += [f"{r.type}: {r.url}" for r in refs]
    rule: dict[str, Any] = {
        "id": entry.id,
        "name": entry.id.replace("-", ""),
        "shortDescription": {"text": entry.title},
        "defaultConfiguration": {"level": _LEVEL[entry.severity.value]},
        "properties": {"tags": list(finding.tags if finding else ()),
                       "confidence": finding.confidence if finding else "verified"},
    }
    help_text = "\n".join(line for line in help_lines if line)
    if help_text:
        rule["help"] = {"text": help_text}
    if refs:
        rule["helpUri"] = refs[0].url
    return rule


def _location(finding: FindingView, roots: tuple[str, ...]) -> list[dict[str, Any]]:
    if finding.path is None:
        return []
    physical: dict[str, Any] = {"artifactLocation": artifact_location(finding.path, roots)}
    if finding.line:
        physical["region"] = {"startLine": int(finding.line)}
    return [{"physicalLocation": physical}]


def sarif_document(view: ReportView, *, roots: tuple[str, ...] = (),
                   root_uri: str | None = None) -> dict[str, Any]:
    """The SARIF log as a dict (validated against the 2.1.0 schema in tests/render/).

    ``roots``: the run directory as it appears in the document's paths; ``root_uri``: its
    ``file://`` URI for ``originalUriBaseIds`` (left out of redacted logs: it names the home).
    """
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    entries: list[FindingView | UndeterminedView] = [*view.findings, *view.undetermined]
    for entry in entries:
        if entry.id not in index:
            index[entry.id] = len(rules)
            rules.append(_rule(entry))
    results: list[dict[str, Any]] = []
    for f in view.findings:
        text = f.message
        if f.fix_text:
            text += f" Fix: {f.fix_text}"
        locations = _location(f, roots)
        uri = locations[0]["physicalLocation"]["artifactLocation"]["uri"] if locations else ""
        result: dict[str, Any] = {
            "ruleId": f.id, "ruleIndex": index[f.id], "kind": "fail",
            "level": _LEVEL[f.severity.value], "message": {"text": text},
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint(f, uri)},
            "properties": {"impact": f.impact.value,
                           "evidence": [e.to_dict() for e in f.evidence],
                           "fixCommands": list(f.fix_commands)},
        }
        if locations:
            result["locations"] = locations
        results.append(result)
    notifications = []
    for u in view.undetermined:
        facts = ", ".join(e.fact for e in u.unknown)
        notifications.append({
            "level": "note",
            "message": {"text": f"Undetermined {u.id} ({u.severity.value}): could not decide "
                                f"'{u.title}': unknown facts: {facts}."},
            "associatedRule": {"id": u.id, "index": index[u.id]},
            "properties": {"unknown": [e.to_dict() for e in u.unknown]},
        })
    invocation: dict[str, Any] = {
        "executionSuccessful": True, "exitCode": view.exit_code,
        "properties": {"inputs": list(view.inputs), "summary": dict(view.counts)},
    }
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    base: dict[str, Any] = {"description": {"text": "The directory fp8-doctor ran in (the "
                                                    "repository root in CI)."}}
    if root_uri:
        base["uri"] = root_uri
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": view.tool_name, "version": view.tool_version,
                                "rules": rules}},
            "invocations": [invocation],
            "originalUriBaseIds": {SRCROOT: base},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def render(doc: dict[str, Any], options: Options) -> str:
    """``--format sarif`` (the :data:`preflight.outputs.REPORT_FORMATS` entry point)."""
    return render_sarif(build_view(doc), roots=options.roots, root_uri=options.root_uri)


def render_sarif(view: ReportView, *, roots: tuple[str, ...] = (),
                 root_uri: str | None = None) -> str:
    """The SARIF log as pretty JSON."""
    return json.dumps(sarif_document(view, roots=roots, root_uri=root_uri), indent=2,
                      ensure_ascii=False) + "\n"
