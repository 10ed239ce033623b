"""What every renderer shares: the environment summary, value formatting, marks and smoke rows.

Renderers work on the (redacted) JSON document of a report, never on live objects and never by
probing: the document is the single source, so what the JSON says and what the text shows agree,
and redaction applied once covers every format.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from preflight.facts import reason_head
from preflight.frameworks._index import DISTRIBUTIONS

MARKS = {"error": "✗", "warning": "!", "info": "i", "ok": "✓", "undetermined": "?"}
SEVERITY_ORDER = ("error", "warning", "info")

# Distributions shown in the environment summary, by group (PEP 503 names, as in pkg.<dist>.*).
FP8_LIBS = ("transformer-engine", "torchao", "ms-amp")
FRAMEWORKS = tuple(dict.fromkeys(d for dists in DISTRIBUTIONS.values() for d in dists))
"""Every framework's distributions (its record's, through the generated index)."""


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


def _get(facts: dict[str, Any], name: str) -> Any:
    return facts.get(name)


def _join(parts: list[str]) -> str:
    return ", ".join(p for p in parts if p)


def _unknown_text(value: Any, told: Collection[str], *, short: bool = False) -> str:
    """An Unknown as text; its reason only once per report (``told``: reasons shown elsewhere, a
    4-line NVML error under "Why those facts are unknown" is not repeated here). ``short``: only
    the reason's head (:func:`reason_head`), for one item of a list."""
    if is_unknown(value) and str(value["$unknown"]) in told:
        return "unknown (why: above)"
    if short and is_unknown(value):
        return f"unknown ({reason_head(str(value['$unknown']))})"
    return fmt_value(value)


def environment_rows(facts: dict[str, Any], told: Collection[str] = (), *,
                     short: bool = False) -> list[tuple[str, str]]:
    """(label, value) rows summarising the environment; only rows with something to say.

    ``told``: Unknown reasons the report already shows (they are referred to, not repeated);
    ``short``: every Unknown by its reason's head only (a block to paste).
    """
    rows: list[tuple[str, str]] = []
    count = _get(facts, "gpu.count")
    if is_unknown(count):
        rows.append(("GPU", _unknown_text(count, told, short=short)))
    elif count is not None:
        if count == 0:
            gpu = "none visible to this process"
            host = _get(facts, "gpu.host_count")
            if isinstance(host, int) and host > 0:
                gpu += f" ({host} on the host)"
        else:
            names = _get(facts, "gpu.names")
            name = (names[0] if isinstance(names, list) and names else _get(facts, "gpu.name"))
            if is_unknown(name) or not isinstance(name, str):
                name = None   # --assume gpu.cc alone: the model is Unknown, never a raw dict
            gpu = f"{count} × {name}" if name else f"{count} GPU(s)"
            cc = _get(facts, "gpu.min_cc") or _get(facts, "gpu.cc")
            if cc is not None and not is_unknown(cc):
                gpu += f" (cc {cc})"
            if _get(facts, "gpu.heterogeneous") is True:
                gpu += ", mixed models"
        rows.append(("GPU", gpu))
    driver = _get(facts, "gpu.driver")
    # An unknown driver for the same reason as an unknown GPU count says nothing new.
    if driver is not None and not (is_unknown(driver) and driver == count):
        cuda = _get(facts, "gpu.cuda_driver")
        rows.append(("Driver", _unknown_text(driver, told, short=short)
                     + (f" (CUDA {fmt_value(cuda)})"
                                                    if cuda and not is_unknown(cuda) else "")))
    py = _get(facts, "host.python")
    if py is not None:
        rows.append(("Python", _join([fmt_value(py), fmt_value(_get(facts, "host.os") or ""),
                                      fmt_value(_get(facts, "host.arch") or "")])))
    torch = _get(facts, "pkg.torch.version")
    if torch is not None:
        build = _get(facts, "cuda.torch_build")
        rows.append(("torch", _unknown_text(torch, told, short=True)
                     + (f" (CUDA {fmt_value(build)})" if build else "")))
    for label, dists in (("FP8 libraries", FP8_LIBS), ("Frameworks", FRAMEWORKS)):
        parts = [f"{d} {_unknown_text(facts[f'pkg.{d}.version'], told, short=True)}"
                 for d in dists
                 if f"pkg.{d}.version" in facts]
        rows.append((label, _join(parts) or "none installed"))
    broken = _get(facts, "pkg.broken")
    if isinstance(broken, list) and broken:
        # A distribution whose metadata cannot be read has no version fact: the rules see it as
        # not installed. Say so, so a "not installed" finding is not taken at face value.
        shown = "; ".join(str(b) for b in broken[:3]) + (f"; +{len(broken) - 3} more"
                                                         if len(broken) > 3 else "")
        rows.append(("Broken installs", f"{len(broken)} with unreadable metadata "
                                        f"(counted as not installed): {shown}"))
    intent = _intent(facts)
    if intent:
        rows.append(("Job asks for", intent))
    launcher = _get(facts, "host.launcher")
    if launcher not in (None, "none"):
        ws = _get(facts, "host.world_size")
        rows.append(("Launcher", fmt_value(launcher) + (f", world size {ws}" if ws else "")))
    if facts.get("runtime.inspected") is True:
        rows.append(("Live model", _runtime(facts)))
    return rows


def _intent(facts: dict[str, Any]) -> str:
    fp8 = facts.get("intent.fp8")
    if fp8 is None:
        return ""
    if fp8 is not True:
        return "FP8: " + fmt_value(fp8)
    parts = ["FP8"]
    for name, label in (("intent.backend", "backend"), ("intent.recipe", "recipe"),
                        ("intent.format", "format")):
        if name in facts:
            parts.append(f"{label} {fmt_value(facts[name])}")
    dist = facts.get("intent.distributed")
    if dist is not None:
        stage = facts.get("intent.zero_stage")
        parts.append(f"{fmt_value(dist)}" + (f" ZeRO-{fmt_value(stage)}" if stage is not None
                                              else ""))
    return _join(parts)


def _runtime(facts: dict[str, Any]) -> str:
    parts = []
    if "runtime.fp8.converted" in facts:
        parts.append(f"{fmt_value(facts['runtime.fp8.converted'])} FP8 module(s)")
    if "runtime.fp8.unconverted_count" in facts:
        parts.append(f"{fmt_value(facts['runtime.fp8.unconverted_count'])} Linear left in high "
                     "precision")
    if "runtime.deepspeed.zero_stage" in facts:
        parts.append(f"DeepSpeed ZeRO-{fmt_value(facts['runtime.deepspeed.zero_stage'])}")
    if "runtime.accelerate.mixed_precision" in facts:
        parts.append(f"accelerate {fmt_value(facts['runtime.accelerate.mixed_precision'])}")
    return _join(parts) or "inspected"


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


def location_text(finding: dict[str, Any]) -> str | None:
    """``path:line`` of a finding, or None."""
    loc = finding.get("location")
    if not loc:
        return None
    return f"{loc['path']}:{loc['line']}" if loc.get("line") else str(loc["path"])


# --- What blocks the run: the order findings are shown in (issue 12, item 5) -----------------
#
# A person reading a report acts on the first finding first, so findings are grouped by impact
# rather than by id: (1) ``blocks`` - an error that stops the job or breaks its training; (2)
# ``no-fp8`` - the job runs but FP8 is silently not applied (rules tagged ``silent-no-fp8``, the
# documented tag; ``silent-bf16`` is read as the same), whatever their severity; (3) ``other`` -
# everything else, by severity. The class is derived from a rule's severity and tags, so a rule
# author chooses it with data, and a rule pack needs no new field.
IMPACTS = ("blocks", "no-fp8", "other")
IMPACT_TITLES = {"blocks": "Stops or breaks the job", "no-fp8": "FP8 silently not applied",
                 "other": "Other findings"}
NO_FP8_TAGS = frozenset({"silent-no-fp8", "silent-bf16"})


def impact(finding: dict[str, Any]) -> str:
    """The finding's class in :data:`IMPACTS`."""
    if NO_FP8_TAGS.intersection(finding.get("tags") or ()):
        return "no-fp8"
    return "blocks" if finding.get("severity") == "error" else "other"


def ordered_findings(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Findings in reading order: by impact, then severity, then id (stable for goldens)."""
    rank = {s: i for i, s in enumerate(SEVERITY_ORDER)}
    return sorted(findings, key=lambda f: (IMPACTS.index(impact(f)),
                                           rank.get(f.get("severity", "info"), 3),
                                           str(f.get("id", ""))))


# The notice that the facts judged are not those of the training environment (a login node, a
# CI runner). The pipeline raises a built-in finding with this id and/or records the judgement
# in the document: ``environment: {is_training_environment, where, reasons, missing_packages}``
# (or, older, ``summary.environment_is_training``). Any may be absent; then there is no notice.
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
    summary = doc.get("summary") or {}
    if summary.get("environment_is_training") is False:
        reason = summary.get("environment_reason")
        return ("This is not the training environment" + (f": {reason}" if reason else "")
                + f". Rules about packages and GPUs judged this machine, not the training node: "
                  f"{_ENV_ADVICE}.")
    return None


def accepted_findings(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Findings a ``--baseline`` file accepted (shown, not counted), in reading order."""
    items = doc.get("baselined")
    return ordered_findings([f for f in items if isinstance(f, dict)]) \
        if isinstance(items, list) else []


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
