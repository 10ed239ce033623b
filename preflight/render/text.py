"""``--format text``: doctor-style sections with ✓ / ! / ✗ marks, fix hints and references.

Built with rich on an in-memory console, so the output is a plain string: colour only when asked
(the CLI asks on a TTY or under ``FORCE_COLOR``), and byte-identical between runs for golden
tests (no timestamps; the width is a parameter: the CLI passes the terminal's, honouring
``COLUMNS``, and everything else gets 100). Text is assembled from ``rich.text.Text`` objects, never
markup, so a ``[REDACTED]`` or a ``[section]`` in a value is printed as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from io import StringIO
from typing import TYPE_CHECKING, Any

from rich.console import Console, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from preflight.registry.smoke_verdict import BACKEND_LABELS, FAIL, NOTE, PASS, SmokeCheck
from preflight.render._common import (
    ENV_NOT_TRAINING,
    MARKS,
    NO_JOB_CLEAN,
    SEVERITY_ORDER,
    first_line,
    fmt_value,
    is_unknown,
)
from preflight.render.envrows import unknown_text
from preflight.render.view import IMPACT_TITLES, FindingView, ReportView, build_view
from preflight.render.wrap import print_wrapped, prose_width

if TYPE_CHECKING:
    from preflight.render import Options

WIDTH = 100
"""The width when none is given (the API, golden files); the CLI passes the terminal's."""
MIN_WIDTH, MAX_WIDTH = 40, 400
HEIGHT = 25
"""Given so that rich never reads LINES (or JUPYTER_LINES) itself: it calls int() on anything
str.isdigit accepts ("²"), render/terminal.py."""
DETAILS = ("quiet", "normal", "verbose")
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan", "ok": "green",
          "undetermined": "magenta"}


def console_for(color: bool, width: int = WIDTH) -> tuple[Console, StringIO]:
    """An in-memory rich console (no terminal probing) and its buffer; see :func:`finish_text`."""
    buf = StringIO()
    console = Console(file=buf, force_terminal=color, color_system="standard" if color else None,
                      width=max(MIN_WIDTH, min(int(width), MAX_WIDTH)), height=HEIGHT,
                      highlight=False,
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


def render(doc: dict[str, Any], options: Options) -> str:
    """``--format text`` (the :data:`preflight.outputs.REPORT_FORMATS` entry point)."""
    return render_text(build_view(doc), options.color, width=options.width or WIDTH,
                       detail=options.detail)


def render_text(view: ReportView, color: bool = False, *, width: int = WIDTH,
                detail: str = "normal") -> str:
    """The human report for a terminal or a CI log.

    Reading order is what a person acts on (issue 12): the "not the training environment"
    notice, findings by what blocks the run (:class:`preflight.findings.Impact`), undetermined rules, the
    smoke step, then the inputs and the environment as context. ``detail``: ``quiet`` (one
    line per finding), ``normal``, ``verbose`` (every reference, the evidence with its source).
    """
    if detail not in DETAILS:
        raise ValueError(f"unknown detail {detail!r}; choose one of {', '.join(DETAILS)}")
    console, buf = console_for(color, width)
    if detail == "quiet":
        _quiet(console, view)
        return finish_text(buf)
    console.print(Text.assemble((f"{view.tool_name} {view.tool_version}", "bold"),
                                " · FP8 preflight check"))
    console.print()
    _notice(console, view)
    _findings(console, view, verbose=detail == "verbose")
    _accepted(console, view)
    _undetermined(console, view, verbose=detail == "verbose")
    _smoke(console, view, verbose=detail == "verbose")
    _inputs(console, view)
    _environment(console, view, verbose=detail == "verbose")
    if detail == "verbose":
        _probes(console, view)
    console.print()
    _print_summary(console, view)
    return finish_text(buf)


def finish_text(buf: StringIO) -> str:
    """The console's text, each line's trailing blanks removed, ending with a newline."""
    # Padding fills lines to the console width; trailing blanks only make golden diffs noisy.
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def _summary(view: ReportView) -> Text:
    worst = view.worst
    return Text.assemble(("Summary: ", "bold"),
                         (view.summary_line, _STYLE[worst.value] if worst else _STYLE["ok"]))


def _print_summary(console: Console, view: ReportView, *, one_line: bool = False) -> None:
    """The summary, wrapped only between its " · " parts ("exit" and "1 (fail-on error)" on
    two lines was a bug); ``one_line`` (``-q``: a line tools read) never wrapped."""
    summary = _summary(view)
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


def _quiet(console: Console, view: ReportView) -> None:
    """``-q``: exactly one line per finding, compiler style (``path:line: severity ID title``),
    so an editor or CI log links the location; then one summary line, which counts the
    undetermined rules (issue 24 item 5: they had a line each, 23 lines for 1 error)."""
    for f in view.findings:
        sev = f.severity.value
        console.print(Text.assemble(f"{f.location}: " if f.location else "", (sev, _STYLE[sev]),
                                    " ", (f.id, "bold"), " ", f.title), soft_wrap=True)
    _print_summary(console, view, one_line=True)


def _notice(console: Console, view: ReportView) -> None:
    notice = view.notice
    if notice:
        _heading(console, "warning", "Not the training environment")
        print_wrapped(console, notice, 4)


def environment_mark(facts: Mapping[str, Any]) -> str:
    """``"warning"`` when no GPU is visible or its count / compute capability is unknown."""
    count = facts.get("gpu.count")
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        return "warning"  # absent, Unknown, or no GPU: FP8 cannot be judged for this machine
    cc = facts.get("gpu.min_cc", facts.get("gpu.cc"))
    return "warning" if cc is None or is_unknown(cc) else "ok"


def inputs_mark(view: ReportView) -> str:
    """``"error"`` when some config file could not be read, ``"info"`` when none was read (no
    green mark for a check that judged no job, issue 24 item 1), else ``"ok"``."""
    if view.unreadable:
        return "error"
    return "info" if view.job_read is False else "ok"


def _environment(console: Console, view: ReportView, *, verbose: bool = False) -> None:
    # Under -v every reason was given in full with the undetermined rules; otherwise a reason
    # is given in full here, once (the groups above give only its head).
    told = {reason for reason, _ in view.unknown_reasons} if verbose else set()
    rows = view.environment
    _heading(console, environment_mark(view.facts), "Environment")
    if not rows:
        print_wrapped(console, "no environment facts (nothing probed)", 4)
    pad = max((len(row.label) for row in rows), default=0) + 2
    for row in rows:
        print_wrapped(console, row.text(lambda p: unknown_text(p, told)), 4,
                      first=Text(row.label.ljust(pad), style="dim"))


def _inputs(console: Console, view: ReportView) -> None:
    _heading(console, inputs_mark(view), "Config files read")
    if view.inputs_summary:
        indented(console, view.inputs_summary, 4)
    for item in view.inputs:
        _unwrapped(console, f"• {item}", 4)
    for item in view.unreadable:
        _unwrapped(console, Text.assemble((f"{MARKS['error']} ", _STYLE["error"]), item,
                                          (" (unreadable)", "dim")), 4)


REFERENCES_SHOWN = 2
"""References printed per finding without ``-v`` (one rule cites up to 8; the rest are counted)."""


def _findings(console: Console, view: ReportView, *, verbose: bool = False) -> None:
    findings = view.findings
    if not findings:
        if view.job_read is False:
            _heading(console, "info", NO_JOB_CLEAN)
        else:
            _heading(console, "ok", "Findings: no known problem matched")
        return
    worst = next(s for s in SEVERITY_ORDER if any(f.severity.value == s for f in findings))
    counts = ", ".join(f"{n} {s}{'s' if n != 1 and s != 'info' else ''}" for s in SEVERITY_ORDER
                       if (n := sum(f.severity.value == s for f in findings)))
    _heading(console, worst, f"Findings: {counts}")
    group = None
    for f in findings:
        if f.impact is not group:
            group = f.impact
            print_wrapped(console, Text(IMPACT_TITLES[group], style="bold underline"), 4)
        _finding(console, f, verbose=verbose)


def _finding(console: Console, f: FindingView, *, verbose: bool = False) -> None:
    sev = f.severity.value
    # A hanging indent, so a long title wraps under the id, not under the mark.
    print_wrapped(console, Text.assemble((f.id, "bold"), "  ", f.title), 4,
                  first=Text(f"{MARKS[sev]} {sev:<7} ", style=_STYLE[sev]))
    if f.id == ENV_NOT_TRAINING:
        print_wrapped(console, Text("(the notice at the top)", style="dim"), 6)
        return
    print_wrapped(console, f.message, 6)
    if f.location:
        _unwrapped(console, Text.assemble(("at ", "dim"), f.location), 6)
    if f.fix_text:
        print_wrapped(console, f.fix_text, 6, first=Text("fix: ", style="green"))
    for cmd in f.fix_commands:
        # A command is copied whole: a newline in it would run half of it.
        _unwrapped(console, Text.assemble(("$ ", "dim"), cmd), 8)
    refs = f.references
    shown = refs if verbose else refs[:REFERENCES_SHOWN]
    for ref in shown:
        # Printed unwrapped, the type first: a URL broken across lines is no longer clickable.
        _unwrapped(console, Text.assemble(("see: ", "dim"), f"{ref.url} ({ref.type})"), 6)
    if len(refs) > len(shown):
        print_wrapped(console, Text(f"+{len(refs) - len(shown)} more reference(s): -v, or "
                                    f"fp8-doctor rules show {f.id}", style="dim"), 6)
    if f.confidence and f.confidence != "verified":
        print_wrapped(console, Text(f"confidence: {f.confidence}", style="dim"), 6)
    if verbose:
        for e in f.evidence:
            _unwrapped(console, Text.assemble(("evidence: ", "dim"), e.fact, " = ",
                                              fmt_value(e.value, limit=200),
                                              (f"  ({e.source})" if e.source else "", "dim")), 6)


def _accepted(console: Console, view: ReportView) -> None:
    """Findings a baseline accepted (one line each: they were read before) and ignored ids."""
    accepted = view.accepted
    if accepted:
        _heading(console, "info", f"Accepted by the baseline: {len(accepted)} finding(s), not "
                                  "counted for the exit code")
        for f in accepted:
            sev = f.severity.value
            print_wrapped(console, Text.assemble((f.id, "bold"), "  ", f.title,
                                                 (f"  ({f.location})" if f.location else "",
                                                  "dim")), 4,
                          first=Text(f"{MARKS[sev]} ", style=_STYLE[sev]))
    if view.ignored:
        _heading(console, "info", f"Ignored (--ignore): {', '.join(view.ignored)}")


def _undetermined(console: Console, view: ReportView, *, verbose: bool = False) -> None:
    items = view.undetermined
    if not items:
        return
    _heading(console, "undetermined",
             f"Undetermined: {len(items)} rule(s) could not be decided (facts unknown)")
    if not verbose:
        # Grouped by what they need (issue 24 item 5): a line per group, its reasons once.
        for group in view.undetermined_groups:
            print_wrapped(console, Text.assemble((group.label, "bold"), ": ", group.advice), 4,
                          hang=2)
            for reason in group.reasons:
                print_wrapped(console, Text(reason, style="dim"), 6, first="why: ")
            print_wrapped(console, ", ".join(group.rule_ids), 6)
        print_wrapped(console, Text("Each rule's title and every reason in full: -v; one rule: "
                                    "fp8-doctor rules show ID", style="dim"), 4)
        return
    for u in items:
        needs = ", ".join(e.fact for e in u.unknown)
        print_wrapped(console, Text.assemble((u.id, "bold"), "  ", u.title,
                                             (f"  (needs {needs})" if needs else "", "dim")),
                      4, first=Text("? ", style=_STYLE["undetermined"]))
    print_wrapped(console, Text("Why those facts are unknown:", style="dim"), 4)
    notice = view.notice or ""
    for reason, names in view.unknown_reasons:
        # A reason the notice at the top already gave (a 4-line NVML error) is not repeated.
        said = len(reason) > 40 and reason in notice
        print_wrapped(console, Text.assemble((", ".join(names), "bold"), ": ",
                                             ("given in the notice at the top", "dim") if said
                                             else reason), 6)


_SMOKE_PROBLEM_KEYS = ("error", "stage", "stderr_tail")


def _smoke(console: Console, view: ReportView, *, verbose: bool = False) -> None:
    smoke = view.smoke
    if not smoke.shown:
        return  # a live inspection has no smoke step; saying "not run" would only be noise
    checks, rows = list(smoke.checks), list(smoke.details)
    mark = "error" if smoke.failed else ("ok" if smoke.ok else "info")
    if mark == "ok" and smoke.missed:
        mark = "warning"   # the child ran fine, but a measured value missed its threshold
    headline = smoke.status if smoke.failed or not checks else smoke.headline
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


def smoke_table(checks: Sequence[SmokeCheck]) -> Table:
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


def _probes(console: Console, view: ReportView) -> None:
    probes = view.probes
    if not probes:
        return
    _heading(console, "info", f"Probes ({len(probes)})")
    for p in probes:
        reason = f": {first_line(p.reason, 160)}" if p.reason else ""
        print_wrapped(console, f"{p.name}: {p.status}, {p.facts} facts, {p.seconds} s{reason}",
                      4)
