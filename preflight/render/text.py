"""``--format text``: doctor-style sections with ✓ / ! / ✗ marks, fix hints and references.

Built with rich on an in-memory console, so the output is a plain string: colour only when asked
(the CLI asks on a TTY or under ``FORCE_COLOR``), and byte-identical between runs for golden
tests (no timestamps; the width is a parameter: the CLI passes the terminal's, honouring
``COLUMNS``, and everything else gets 100). Text is assembled from ``rich.text.Text`` objects, never
markup, so a ``[REDACTED]`` or a ``[section]`` in a value is printed as written.
"""

from __future__ import annotations

import re
from io import StringIO
from typing import Any

from rich.console import Console, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from preflight.render._common import (
    ENV_NOT_TRAINING,
    IMPACT_TITLES,
    MARKS,
    NO_JOB_CLEAN,
    SEVERITY_ORDER,
    accepted_findings,
    config_inputs,
    environment_notice,
    environment_rows,
    first_line,
    fmt_value,
    ignored_ids,
    impact,
    inputs_summary,
    is_unknown,
    location_text,
    ordered_findings,
    smoke_rows,
    summary_line,
    unknown_reasons,
    unreadable_configs,
)
from preflight.render.smoke_checks import (
    BACKEND_LABELS,
    FAIL,
    NOTE,
    PASS,
    SmokeCheck,
    smoke_checks,
    smoke_headline,
)
from preflight.render.undetermined import groups as undetermined_groups
from preflight.render.wrap import print_wrapped, prose_width

WIDTH = 100
"""The width when none is given (the API, golden files); the CLI passes the terminal's."""
MIN_WIDTH, MAX_WIDTH = 40, 400
DETAILS = ("quiet", "normal", "verbose")
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan", "ok": "green",
          "undetermined": "magenta"}


def console_for(color: bool, width: int = WIDTH) -> tuple[Console, StringIO]:
    """An in-memory rich console (no terminal probing) and its buffer; see :func:`finish_text`."""
    buf = StringIO()
    console = Console(file=buf, force_terminal=color, color_system="standard" if color else None,
                      width=max(MIN_WIDTH, min(int(width), MAX_WIDTH)), highlight=False,
                      emoji=False, markup=False,
                      legacy_windows=False, soft_wrap=False)
    return console, buf


def _heading(console: Console, mark: str, title: str) -> None:
    print_wrapped(console, Text(title, style="bold"), 0,
                  first=Text.assemble(("[", "dim"), (MARKS[mark], _STYLE[mark]), ("] ", "dim")))


def indented(console: Console, item: RenderableType, indent: int) -> None:
    """``item`` printed ``indent`` columns in: text wrapped at whitespace to the prose width
    (never mid-word, :mod:`preflight.render.wrap`), a table to the console's width."""
    if isinstance(item, (str, Text)):
        print_wrapped(console, item, indent)
    else:
        console.print(Padding(item, (0, 0, 0, indent)))


def _unwrapped(console: Console, item: str | Text, indent: int) -> None:
    """One line that is never folded (a path or file:line broken mid-word cannot be copied);
    the terminal wraps it, if at all."""
    console.print(Text.assemble(" " * indent, item), soft_wrap=True)


def render_text(doc: dict[str, Any], color: bool = False, *, width: int = WIDTH,
                detail: str = "normal") -> str:
    """The human report for a terminal or a CI log.

    Reading order is what a person acts on (issue 12): the "not the training environment"
    notice, findings by what blocks the run (see ``_common.IMPACTS``), undetermined rules, the
    smoke step, then the inputs and the environment as context. ``detail``: ``quiet`` (one
    line per finding), ``normal``, ``verbose`` (every reference, the evidence with its source).
    """
    if detail not in DETAILS:
        raise ValueError(f"unknown detail {detail!r}; choose one of {', '.join(DETAILS)}")
    console, buf = console_for(color, width)
    if detail == "quiet":
        _quiet(console, doc)
        return finish_text(buf)
    tool = doc.get("tool") or {}
    console.print(Text.assemble((f"{tool.get('name', 'fp8-doctor')} {tool.get('version', '')}",
                                 "bold"), " · FP8 preflight check"))
    console.print()
    _notice(console, doc)
    _findings(console, doc, verbose=detail == "verbose")
    _accepted(console, doc)
    _undetermined(console, doc, verbose=detail == "verbose")
    _smoke(console, doc, verbose=detail == "verbose")
    _inputs(console, doc)
    _environment(console, doc, verbose=detail == "verbose")
    if detail == "verbose":
        _probes(console, doc)
    console.print()
    _print_summary(console, doc)
    return finish_text(buf)


def finish_text(buf: StringIO) -> str:
    """The console's text, each line's trailing blanks removed, ending with a newline."""
    # Padding fills lines to the console width; trailing blanks only make golden diffs noisy.
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def _summary(doc: dict[str, Any]) -> Text:
    worst = next((s for s in SEVERITY_ORDER if (doc.get("summary") or {}).get(s)), None)
    return Text.assemble(("Summary: ", "bold"),
                         (summary_line(doc), _STYLE[worst] if worst else _STYLE["ok"]))


def _print_summary(console: Console, doc: dict[str, Any], *, one_line: bool = False) -> None:
    """The summary, wrapped only between its " · " parts ("exit" and "1 (fail-on error)" on
    two lines was a bug); ``one_line`` (``-q``: a line tools read) never wrapped."""
    summary = _summary(doc)
    if one_line:
        console.print(summary, soft_wrap=True)
        return
    room = prose_width(console.width)
    cuts = [m.start() for m in re.finditer(" · ", summary.plain)] + [len(summary.plain)]
    line, start = summary[:cuts[0]], cuts[0]
    for cut in cuts[1:]:
        part = summary[start:cut]          # " · 42 rules evaluated, 1 undetermined"
        if len(line) + len(part) > room:
            console.print(line, soft_wrap=True)
            line = Text.assemble(" " * 6, part)
        else:
            line = Text.assemble(line, part)
        start = cut
    console.print(line, soft_wrap=True)


def _quiet(console: Console, doc: dict[str, Any]) -> None:
    """``-q``: exactly one line per finding, compiler style (``path:line: severity ID title``),
    so an editor or CI log links the location; then one summary line, which counts the
    undetermined rules (issue 24 item 5: they had a line each, 23 lines for 1 error)."""
    for f in ordered_findings(doc.get("findings") or []):
        loc = location_text(f)
        sev = f["severity"]
        console.print(Text.assemble(f"{loc}: " if loc else "", (sev, _STYLE[sev]), " ",
                                    (f["id"], "bold"), " ", f["title"]), soft_wrap=True)
    _print_summary(console, doc, one_line=True)


def _notice(console: Console, doc: dict[str, Any]) -> None:
    notice = environment_notice(doc)
    if notice:
        _heading(console, "warning", "Not the training environment")
        print_wrapped(console, notice, 4)


def environment_mark(facts: dict[str, Any]) -> str:
    """``"warning"`` when no GPU is visible or its count / compute capability is unknown."""
    count = facts.get("gpu.count")
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        return "warning"  # absent, Unknown, or no GPU: FP8 cannot be judged for this machine
    cc = facts.get("gpu.min_cc", facts.get("gpu.cc"))
    return "warning" if cc is None or is_unknown(cc) else "ok"


def inputs_mark(doc: dict[str, Any]) -> str:
    """``"error"`` when some config file could not be read, ``"info"`` when none was read (no
    green mark for a check that judged no job, issue 24 item 1), else ``"ok"``."""
    if unreadable_configs(doc):
        return "error"
    return "info" if doc.get("job_read") is False else "ok"


def _environment(console: Console, doc: dict[str, Any], *, verbose: bool = False) -> None:
    facts = doc.get("facts") or {}
    # Under -v every reason was given in full with the undetermined rules; otherwise a reason
    # is given in full here, once (the groups above give only its head).
    told = {reason for reason, _ in unknown_reasons(doc)} if verbose else set()
    rows = environment_rows(facts, told)
    _heading(console, environment_mark(facts), "Environment")
    if not rows:
        print_wrapped(console, "no environment facts (nothing probed)", 4)
    pad = max((len(label) for label, _ in rows), default=0) + 2
    for label, value in rows:
        print_wrapped(console, value, 4, first=Text(label.ljust(pad), style="dim"))


def _inputs(console: Console, doc: dict[str, Any]) -> None:
    _heading(console, inputs_mark(doc), "Config files read")
    summary = inputs_summary(doc)
    if summary:
        indented(console, summary, 4)
    for item in config_inputs(doc):
        _unwrapped(console, f"• {item}", 4)
    for item in unreadable_configs(doc):
        _unwrapped(console, Text.assemble((f"{MARKS['error']} ", _STYLE["error"]), item,
                                          (" (unreadable)", "dim")), 4)


REFERENCES_SHOWN = 2
"""References printed per finding without ``-v`` (one rule cites up to 8; the rest are counted)."""


def _findings(console: Console, doc: dict[str, Any], *, verbose: bool = False) -> None:
    findings = ordered_findings(doc.get("findings") or [])
    if not findings:
        if doc.get("job_read") is False:
            _heading(console, "info", NO_JOB_CLEAN)
        else:
            _heading(console, "ok", "Findings: no known problem matched")
        return
    worst = next(s for s in SEVERITY_ORDER if any(f["severity"] == s for f in findings))
    counts = ", ".join(f"{n} {s}{'s' if n != 1 and s != 'info' else ''}" for s in SEVERITY_ORDER
                       if (n := sum(f["severity"] == s for f in findings)))
    _heading(console, worst, f"Findings: {counts}")
    group = None
    for f in findings:
        if impact(f) != group:
            group = impact(f)
            print_wrapped(console, Text(IMPACT_TITLES[group], style="bold underline"), 4)
        _finding(console, f, verbose=verbose)


def _finding(console: Console, f: dict[str, Any], *, verbose: bool = False) -> None:
    sev = f["severity"]
    # A hanging indent, so a long title wraps under the id, not under the mark.
    print_wrapped(console, Text.assemble((f["id"], "bold"), "  ", f["title"]), 4,
                  first=Text(f"{MARKS[sev]} {sev:<7} ", style=_STYLE[sev]))
    if f.get("id") == ENV_NOT_TRAINING:
        print_wrapped(console, Text("(the notice at the top)", style="dim"), 6)
        return
    print_wrapped(console, f["message"], 6)
    loc = location_text(f)
    if loc:
        _unwrapped(console, Text.assemble(("at ", "dim"), loc), 6)
    fix = f.get("fix") or {}
    if fix.get("text"):
        print_wrapped(console, fix["text"], 6, first=Text("fix: ", style="green"))
    for cmd in fix.get("commands") or []:
        # A command is copied whole: a newline in it would run half of it.
        _unwrapped(console, Text.assemble(("$ ", "dim"), cmd), 8)
    refs = f.get("references") or []
    shown = refs if verbose else refs[:REFERENCES_SHOWN]
    for ref in shown:
        # Printed unwrapped, the type first: a URL broken across lines is no longer clickable.
        _unwrapped(console, Text.assemble(("see: ", "dim"), f"{ref['url']} ({ref['type']})"), 6)
    if len(refs) > len(shown):
        print_wrapped(console, Text(f"+{len(refs) - len(shown)} more reference(s): -v, or "
                                    f"fp8-doctor rules show {f['id']}", style="dim"), 6)
    if f.get("confidence") and f["confidence"] != "verified":
        print_wrapped(console, Text(f"confidence: {f['confidence']}", style="dim"), 6)
    if verbose:
        for e in f.get("evidence") or []:
            _unwrapped(console, Text.assemble(("evidence: ", "dim"), e["fact"], " = ",
                                              fmt_value(e.get("value"), limit=200),
                                              (f"  ({e['source']})" if e.get("source") else "",
                                               "dim")), 6)


def _accepted(console: Console, doc: dict[str, Any]) -> None:
    """Findings a baseline accepted (one line each: they were read before) and ignored ids."""
    accepted = accepted_findings(doc)
    if accepted:
        _heading(console, "info", f"Accepted by the baseline: {len(accepted)} finding(s), not "
                                  "counted for the exit code")
        for f in accepted:
            loc = location_text(f)
            print_wrapped(console, Text.assemble((f["id"], "bold"), "  ", f["title"],
                                                 (f"  ({loc})" if loc else "", "dim")), 4,
                          first=Text(f"{MARKS[f['severity']]} ", style=_STYLE[f["severity"]]))
    ignored = ignored_ids(doc)
    if ignored:
        _heading(console, "info", f"Ignored (--ignore): {', '.join(ignored)}")


def _undetermined(console: Console, doc: dict[str, Any], *, verbose: bool = False) -> None:
    items = doc.get("undetermined") or []
    if not items:
        return
    _heading(console, "undetermined",
             f"Undetermined: {len(items)} rule(s) could not be decided (facts unknown)")
    if not verbose:
        # Grouped by what they need (issue 24 item 5): a line per group, its reasons once.
        for group in undetermined_groups(doc):
            print_wrapped(console, Text.assemble((group.label, "bold"), ": ", group.advice), 4,
                          hang=2)
            for reason in group.reasons:
                print_wrapped(console, Text(reason, style="dim"), 6, first="why: ")
            print_wrapped(console, ", ".join(group.rule_ids), 6)
        print_wrapped(console, Text("Each rule's title and every reason in full: -v; one rule: "
                                    "fp8-doctor rules show ID", style="dim"), 4)
        return
    for u in items:
        needs = ", ".join(e["fact"] for e in u.get("unknown") or [])
        print_wrapped(console, Text.assemble((u["id"], "bold"), "  ", u["title"],
                                             (f"  (needs {needs})" if needs else "", "dim")),
                      4, first=Text("? ", style=_STYLE["undetermined"]))
    print_wrapped(console, Text("Why those facts are unknown:", style="dim"), 4)
    notice = environment_notice(doc) or ""
    for reason, names in unknown_reasons(doc):
        # A reason the notice at the top already gave (a 4-line NVML error) is not repeated.
        said = len(reason) > 40 and reason in notice
        print_wrapped(console, Text.assemble((", ".join(names), "bold"), ": ",
                                             ("given in the notice at the top", "dim") if said
                                             else reason), 6)


_SMOKE_PROBLEM_KEYS = ("error", "stage", "stderr_tail")


def _smoke(console: Console, doc: dict[str, Any], *, verbose: bool = False) -> None:
    facts = doc.get("facts") or {}
    if facts.get("runtime.inspected") is True and "smoke.ran" not in facts and not doc.get("smoke"):
        return  # a live inspection has no smoke step; saying "not run" would only be noise
    status, rows = smoke_rows(doc)
    checks = smoke_checks(facts)
    failed = facts.get("smoke.status") not in (None, "ok") and facts.get("smoke.ran") is not False
    mark = "error" if failed else ("ok" if facts.get("smoke.status") == "ok" else "info")
    if mark == "ok" and any(c.verdict == FAIL for c in checks):
        mark = "warning"   # the child ran fine, but a measured value missed its threshold
    headline = status if failed or not checks else smoke_headline(facts)
    _heading(console, mark, f"Smoke step: {headline}")
    if checks:
        indented(console, smoke_table(checks), 4)
    # The raw details only where they add something: -v, a document with no judged checks (an
    # older snapshot), and the child's error, stage and stderr when it crashed.
    if not (verbose or not checks):
        rows = [(k, v) for k, v in rows if k in _SMOKE_PROBLEM_KEYS]
    if rows:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="dim", no_wrap=True)
        table.add_column()
        for key, value in rows:
            table.add_row(key, Text(value))
        indented(console, table, 4)


def smoke_table(checks: list[SmokeCheck]) -> Table:
    """The verdict table (also what ``fp8-doctor smoke`` prints)."""
    table = Table.grid(padding=(0, 2))
    for _ in range(4):
        table.add_column()
    group = None
    for c in checks:
        if c.group != group:
            group = c.group
            table.add_row(Text(BACKEND_LABELS.get(group, group), style="bold"), "", "", "")
        mark = {PASS: "ok", FAIL: "error", NOTE: "info"}.get(c.verdict, "undetermined")
        need = "" if c.threshold == "-" else f"need {c.threshold}"
        table.add_row(Text.assemble("  ", (MARKS[mark] + " ", _STYLE[mark]), c.name),
                      Text(c.measured), Text(need, style="dim"),
                      Text(c.verdict, style=_STYLE[mark]))
    return table


def _probes(console: Console, doc: dict[str, Any]) -> None:
    probes = doc.get("probes") or []
    if not probes:
        return
    _heading(console, "info", f"Probes ({len(probes)})")
    for p in probes:
        reason = f": {first_line(str(p['reason']), 160)}" if p.get("reason") else ""
        print_wrapped(console, f"{p['name']}: {p['status']}, {p.get('facts', '?')} facts, "
                               f"{p.get('seconds', '?')} s{reason}", 4)
