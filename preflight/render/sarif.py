"""``--format sarif``: SARIF 2.1.0 for code-scanning UIs (GitHub, GitLab, VS Code SARIF viewer).

One run, one ``reportingDescriptor`` per rule that fired or stayed undetermined, one result per
finding, in the order a person acts on them (render/_common.py). Locations:

- a config path under the directory fp8-doctor ran in (``srcroot``; the repository root in CI)
  is a relative URI with ``uriBaseId: "%SRCROOT%"``, so GitHub code scanning places the
  annotation in the repository whatever the runner's checkout path (SARIF 3.4.4; GitHub's
  upload-sarif resolves %SRCROOT% to the checkout); a relative path as given is relative to it
  too; an absolute path elsewhere stays a ``file://`` URI.
- findings with no config involved (the machine, the installed packages) carry no location, as
  the SARIF spec allows (pip-audit's maintainers chose the same in pypa/pip-audit#206).

Results come in reading order, each with ``properties.impact`` (blocks | no-fp8 | other, see
render/_common.py) and ``partialFingerprints`` (rule id, file and the facts that fired it; not
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
from typing import Any
from urllib.parse import quote

from preflight.render._common import impact, ordered_findings

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


def fingerprint(finding: dict[str, Any], uri: str) -> str:
    """Stable across runs, machines and edits that move lines: rule, file, deciding facts."""
    facts = sorted(str(e.get("fact")) for e in finding.get("evidence") or [])
    text = "\0".join([str(finding["id"]), uri, *facts])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _rule(entry: dict[str, Any]) -> dict[str, Any]:
    fix = entry.get("fix") or {}
    refs = entry.get("references") or []
    help_lines = [fix.get("text") or ""] + [f"$ {c}" for c in fix.get("commands") or []]
    help_lines += [f"{r['type']}: {r['url']}" for r in refs]
    rule: dict[str, Any] = {
        "id": entry["id"],
        "name": entry["id"].replace("-", ""),
        "shortDescription": {"text": entry["title"]},
        "defaultConfiguration": {"level": _LEVEL[entry["severity"]]},
        "properties": {"tags": list(entry.get("tags") or []),
                       "confidence": entry.get("confidence", "verified")},
    }
    help_text = "\n".join(line for line in help_lines if line)
    if help_text:
        rule["help"] = {"text": help_text}
    if refs:
        rule["helpUri"] = refs[0]["url"]
    return rule


def _location(finding: dict[str, Any], roots: tuple[str, ...]) -> list[dict[str, Any]]:
    loc = finding.get("location")
    if not loc:
        return []
    physical: dict[str, Any] = {"artifactLocation": artifact_location(str(loc["path"]), roots)}
    if loc.get("line"):
        physical["region"] = {"startLine": int(loc["line"])}
    return [{"physicalLocation": physical}]


def sarif_document(doc: dict[str, Any], *, roots: tuple[str, ...] = (),
                   root_uri: str | None = None) -> dict[str, Any]:
    """The SARIF log as a dict (validated against the 2.1.0 schema in tests/render/).

    ``roots``: the run directory as it appears in the document's paths; ``root_uri``: its
    ``file://`` URI for ``originalUriBaseIds`` (left out of redacted logs: it names the home).
    """
    findings = ordered_findings(doc.get("findings") or [])
    undetermined = doc.get("undetermined") or []
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for entry in [*findings, *undetermined]:
        if entry["id"] not in index:
            index[entry["id"]] = len(rules)
            rules.append(_rule(entry))
    results: list[dict[str, Any]] = []
    for f in findings:
        text = f["message"]
        if (f.get("fix") or {}).get("text"):
            text += f" Fix: {f['fix']['text']}"
        locations = _location(f, roots)
        uri = locations[0]["physicalLocation"]["artifactLocation"]["uri"] if locations else ""
        result: dict[str, Any] = {
            "ruleId": f["id"], "ruleIndex": index[f["id"]], "kind": "fail",
            "level": _LEVEL[f["severity"]], "message": {"text": text},
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint(f, uri)},
            "properties": {"impact": impact(f), "evidence": f.get("evidence") or [],
                           "fixCommands": list((f.get("fix") or {}).get("commands") or [])},
        }
        if locations:
            result["locations"] = locations
        results.append(result)
    notifications = []
    for u in undetermined:
        facts = ", ".join(e["fact"] for e in u.get("unknown") or [])
        notifications.append({
            "level": "note",
            "message": {"text": f"Undetermined {u['id']} ({u['severity']}): could not decide "
                                f"'{u['title']}': unknown facts: {facts}."},
            "associatedRule": {"id": u["id"], "index": index[u["id"]]},
            "properties": {"unknown": u.get("unknown") or []},
        })
    invocation: dict[str, Any] = {
        "executionSuccessful": True, "exitCode": int(doc.get("exit_code", 0)),
        "properties": {"inputs": list(doc.get("inputs") or []),
                       "summary": doc.get("summary") or {}},
    }
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    base: dict[str, Any] = {"description": {"text": "The directory fp8-doctor ran in (the "
                                                    "repository root in CI)."}}
    if root_uri:
        base["uri"] = root_uri
    tool = doc.get("tool") or {}
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": tool.get("name", "fp8-doctor"),
                                "version": str(tool.get("version", "")),
                                "rules": rules}},
            "invocations": [invocation],
            "originalUriBaseIds": {SRCROOT: base},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def render_sarif(doc: dict[str, Any], *, roots: tuple[str, ...] = (),
                 root_uri: str | None = None) -> str:
    """The SARIF log as pretty JSON."""
    return json.dumps(sarif_document(doc, roots=roots, root_uri=root_uri), indent=2,
                      ensure_ascii=False) + "\n"
