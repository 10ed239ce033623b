"""What the view and the renderers share: value formatting, marks, the summary line, smoke rows.

Renderers work on the (redacted) JSON document of a report, never on live objects and never by
probing: the document is the single source (through :mod:`preflight.render.view` for text,
Markdown and SARIF), so what the JSON says and what the text shows agree, and redaction applied
once covers every format.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

MARKS = {"error": "✗", "warning": "!", "info": "i", "ok": "✓", "undetermined": "?"}
SEVERITY_ORDER = ("error", "warning", "info")


def is_unknown(value: Any) -> bool:
    """True for an encoded Unknown: ``{"$unknown": reason}``."""
    return isinstance(value, dict) and set(value) == {"$unknown"}


def fmt_value(value: Any, *, limit: int = 0) -> str:
    """One fact value as short human text (Unknown as ``unknown (reason)``)."""
    if is_unknown(value):
        text = f"unknown ({value['$unknown']})"
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, float):
        text = f"{value:.4g}"
    elif isinstance(value, str):
        text = value
    elif isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        text = ", ".join(str(v) for v in value) if value else "(none)"
    else:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    if limit and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def unknown_reasons(doc: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(reason, fact names) for every unknown fact the undetermined rules needed, grouped by reason
    in first-seen order, so a reason shared by many facts and rules is printed once."""
    groups: dict[str, list[str]] = {}
    for u in doc.get("undetermined") or []:
        for e in u.get("unknown") or []:
            value = e.get("value")
            reason = str(value["$unknown"]) if is_unknown(value) else fmt_value(value)
            names = groups.setdefault(reason, [])
            if e["fact"] not in names:
                names.append(e["fact"])
    return list(groups.items())


def config_inputs(doc: dict[str, Any]) -> list[str]:
    """The inputs line of the report ("accelerate: ~/job/acc.yaml", "snapshot: ...")."""
    return [str(i) for i in doc.get("inputs") or []]


# The finding the pipeline raises for a config file that cannot be read (preflight/api.py).
CONFIG_UNREADABLE = "FP8D-CFG-UNREADABLE"
NO_INPUTS = "none found (no PATH given and no accelerate default config, or none in the given folders)"
NO_JOB = "FP8D-CFG-NO-JOB"
NO_INPUTS_GIVEN = "none found in the paths given (FP8D-CFG-NO-JOB says where it looked)"
NO_INPUTS_NONE = "none: no PATH given and no accelerate default config (only this machine checked)"


def unreadable_configs(doc: dict[str, Any]) -> list[str]:
    """``path:line`` of every config file that was given but could not be read."""
    return [location_text(f) or str(f.get("message", "")) for f in doc.get("findings") or []
            if f.get("id") == CONFIG_UNREADABLE]


def inputs_summary(doc: dict[str, Any]) -> str | None:
    """The line to show instead of the inputs when none could be used, else None.

    Paths that were given but could not be parsed are not "no PATH given": the report says
    they failed (their findings hold the file, line and parser message).
    """
    if config_inputs(doc):
        return None
    bad = unreadable_configs(doc)
    if bad:
        noun = "file was" if len(bad) == 1 else "files were"
        return f"none readable: {len(bad)} config {noun} given but could not be read ({CONFIG_UNREADABLE})"
    # FP8D-CFG-NO-JOB has a location exactly when paths were given (the path that held no job):
    # "no PATH given" read as untrue after `check .` in an empty folder (newcomer run).
    no_job = [f for f in doc.get("findings") or [] if f.get("id") == NO_JOB]
    if no_job:
        return NO_INPUTS_GIVEN if any(f.get("location") for f in no_job) else NO_INPUTS_NONE
    return NO_INPUTS


def smoke_rows(doc: dict[str, Any]) -> tuple[str, list[tuple[str, str]]]:
    """A one-line smoke status and flattened (key, value) rows of the smoke details."""
    facts = doc.get("facts") or {}
    ran = facts.get("smoke.ran")
    if ran is False:
        reason = fmt_value(facts.get("smoke.skip_reason", "not requested"))
        status = "skipped: " + reason.removeprefix("skipped: ")
    elif ran is None and not doc.get("smoke"):
        status = "not run"
    else:
        status = fmt_value(facts.get("smoke.status", "ran"))
        if "smoke.device" in facts:
            status += f" on {fmt_value(facts['smoke.device'])}"
        if "smoke.error" in facts:
            status += f": {fmt_value(facts['smoke.error'], limit=300)}"
    rows: list[tuple[str, str]] = []
    _flatten("", doc.get("smoke"), rows)
    return status, rows


def _flatten(prefix: str, value: Any, out: list[tuple[str, str]]) -> None:
    if isinstance(value, dict) and not is_unknown(value):
        for key in sorted(value, key=str):
            _flatten(f"{prefix}.{key}" if prefix else str(key), value[key], out)
    elif prefix:
        out.append((prefix, smoke_value(prefix, value)))


def smoke_value(key: str, value: Any) -> str:
    """Units by naming convention: keys with ``sqnr`` are dB, keys with ``speedup`` ratios.

    A child's stderr is shown by its end: a traceback starts with frozen runpy frames and ends
    with the error, so the first 200 characters would show everything but the error.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "sqnr" in key:
            return f"{value:.1f} dB"
        if "speedup" in key:
            return f"{value:.2f}×"
    if key.endswith("stderr_tail") and isinstance(value, str):
        return tail_text(value, 400)
    return fmt_value(value, limit=200)


def tail_text(text: str, limit: int) -> str:
    """The last ``limit`` characters of ``text``, from a line start where possible, "…" first."""
    text = text.rstrip()
    if len(text) <= limit:
        return text
    cut = text[-(limit - 1):]
    newline = cut.find("\n")
    if 0 <= newline < len(cut) - 1:
        cut = cut[newline + 1:]
    return "…" + cut


def summary_line(doc: dict[str, Any]) -> str:
    """The one-line result.

    ``1 error, 2 warnings, 0 info · 40 rules evaluated, 3 undetermined · exit 1 (fail-on error)``
    """
    s = doc.get("summary") or {}
    n_err, n_warn, n_info = s.get("error", 0), s.get("warning", 0), s.get("info", 0)
    counts = (f"{n_err} error{'s' if n_err != 1 else ''}, "
              f"{n_warn} warning{'s' if n_warn != 1 else ''}, {n_info} info")
    rules = f"{doc.get('rules_evaluated', 0)} rules evaluated"
    und = len(doc.get("undetermined") or [])
    if und:
        rules += f", {und} undetermined"
    if doc.get("job_read") is False:
        rules = f"no job read (this machine only) · {rules}"
    accepted = len(doc.get("baselined") or [])
    if accepted:
        counts += f" · {accepted} baselined"
    return f"{counts} · {rules} · exit {doc.get('exit_code', 0)} (fail-on {fail_on(doc)})"


NO_JOB_CLEAN = "Findings: none, but no job was read: only this machine was checked"
"""The heading of a report with no finding that judged no job: never the green mark
(issue 24 item 1), even when ``--ignore FP8D-CFG-NO-JOB`` dropped the finding that says so."""


def fail_on(doc: dict[str, Any]) -> str:
    """The threshold the document's exit code was computed with."""
    return str(doc.get("fail_on") or "error")


def location_text(finding: Mapping[str, Any]) -> str | None:
    """``path:line`` of a finding, or None."""
    loc = finding.get("location")
    if not loc:
        return None
    return f"{loc['path']}:{loc['line']}" if loc.get("line") else str(loc["path"])


# The notice that the facts judged are not those of the training environment (a login node, a
# CI runner). The pipeline raises a built-in finding with this id and/or records the judgement
# in the document: ``environment: {is_training_environment, where, reasons, missing_packages}``.
# Either may be absent; then there is no notice.
ENV_NOT_TRAINING = "FP8D-ENV-NOT-TRAINING"
_ENV_ADVICE = ("run on the training node, pass --snapshot from it, or --assume pkg.NAME=VERSION "
               "for its stack")


def environment_notice(doc: dict[str, Any]) -> str | None:
    """One paragraph to show near the top when the report judged another environment, else None."""
    finding = next((f for f in doc.get("findings") or [] if f.get("id") == ENV_NOT_TRAINING),
                   None)
    if finding is not None:
        return str(finding.get("message") or finding.get("title") or "")
    env = doc.get("environment")
    if isinstance(env, dict) and env.get("is_training_environment") is not True and (
            env.get("is_training_environment") is False or env.get("reasons")):
        verb = "is not" if env.get("is_training_environment") is False else "may not be"
        where = str(env.get("where") or "this machine")
        parts = [str(r) for r in env.get("reasons") or []]
        missing = [" or ".join(m.get("packages") or []) for m in env.get("missing_packages") or []
                   if isinstance(m, dict)]
        if missing:
            parts.append("not installed there: " + ", ".join(m for m in missing if m))
        why = f": {'; '.join(parts)}" if parts else ""
        return f"The environment judged ({where}) {verb} the training environment{why}. " \
               f"Rules about it are undetermined, not passed: {_ENV_ADVICE}."
    return None


def ignored_ids(doc: dict[str, Any]) -> list[str]:
    """Rule ids ``--ignore`` dropped."""
    items = doc.get("ignored")
    return [str(i) for i in items] if isinstance(items, list) else []


def first_line(text: str, limit: int = 0) -> str:
    """The first line of ``text`` (a multi-line probe error shown once in full elsewhere)."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    more = line != text.strip()
    if limit and len(line) > limit:
        line, more = line[: limit - 1], True
    return line + ("…" if more else "")
