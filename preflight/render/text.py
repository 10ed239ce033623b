"""``--format text``: doctor-style sections with ✓ / ! / ✗ marks, fix hints and references.

Built with rich on an in-memory console (``width=100``), so the output is a plain string: colour
only when asked (the CLI asks on a TTY), and byte-identical between runs for golden tests (no
timestamps, no terminal-size probing). Text is assembled from ``rich.text.Text`` objects, never
markup, so a ``[REDACTED]`` or a ``[section]`` in a value is printed as written.
"""

from __future__ import annotations

from io import StringIO
from typing import Any

from rich.console import Console, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from preflight.render._common import (
    MARKS,
    SEVERITY_ORDER,
    config_inputs,
    environment_rows,
    inputs_summary,
    is_unknown,
    location_text,
    smoke_rows,
    summary_line,
    unknown_reasons,
    unreadable_configs,
)

WIDTH = 100
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan", "ok": "green",
          "undetermined": "magenta"}


def _console(color: bool) -> tuple[Console, StringIO]:
    buf = StringIO()
    console = Console(file=buf, force_terminal=color, color_system="standard" if color else None,
                      width=WIDTH, highlight=False, emoji=False, markup=False,
                      legacy_windows=False, soft_wrap=False)
    return console, buf


def _heading(console: Console, mark: str, title: str) -> None:
    console.print(Text.assemble(("[", "dim"), (MARKS[mark], _STYLE[mark]), ("] ", "dim"),
                                (title, "bold")))


def _indented(console: Console, item: RenderableType, indent: int) -> None:
    console.print(Padding(Text(item) if isinstance(item, str) else item, (0, 0, 0, indent)))


def _unwrapped(console: Console, item: str | Text, indent: int) -> None:
    """One line that is never folded (a path or file:line broken mid-word cannot be copied);
    the terminal wraps it, if at all."""
    console.print(Text.assemble(" " * indent, item), soft_wrap=True)


def render_text(doc: dict[str, Any], color: bool = False) -> str:
    """The human report for a terminal or a CI log."""
    console, buf = _console(color)
    tool = doc.get("tool") or {}
    console.print(Text.assemble((f"{tool.get('name', 'fp8-doctor')} {tool.get('version', '')}",
                                 "bold"), " · FP8 preflight check"))
    console.print()
    _environment(console, doc)
    _inputs(console, doc)
    _findings(console, doc)
    _undetermined(console, doc)
    _smoke(console, doc)
    console.print()
    worst = next((s for s in SEVERITY_ORDER if (doc.get("summary") or {}).get(s)), None)
    console.print(Text.assemble(("Summary: ", "bold"),
                                (summary_line(doc), _STYLE[worst] if worst else _STYLE["ok"])))
    # Padding fills lines to the console width; trailing blanks only make golden diffs noisy.
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def environment_mark(facts: dict[str, Any]) -> str:
    """``"warning"`` when no GPU is visible or its count / compute capability is unknown."""
    count = facts.get("gpu.count")
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        return "warning"  # absent, Unknown, or no GPU: FP8 cannot be judged for this machine
    cc = facts.get("gpu.min_cc", facts.get("gpu.cc"))
    return "warning" if cc is None or is_unknown(cc) else "ok"


def inputs_mark(doc: dict[str, Any]) -> str:
    """``"error"`` when some config file could not be read, else ``"ok"``."""
    return "error" if unreadable_configs(doc) else "ok"


def _environment(console: Console, doc: dict[str, Any]) -> None:
    facts = doc.get("facts") or {}
    rows = environment_rows(facts)
    _heading(console, environment_mark(facts), "Environment")
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim", no_wrap=True)
    table.add_column()
    for label, value in rows:
        table.add_row(label, Text(value))
    if not rows:
        table.add_row("", Text("no environment facts (nothing probed)"))
    _indented(console, table, 4)


def _inputs(console: Console, doc: dict[str, Any]) -> None:
    _heading(console, inputs_mark(doc), "Config files read")
    summary = inputs_summary(doc)
    if summary:
        _indented(console, summary, 4)
    for item in config_inputs(doc):
        _unwrapped(console, f"• {item}", 4)
    for item in unreadable_configs(doc):
        _indented(console, Text.assemble((f"{MARKS['error']} ", _STYLE["error"]), item,
                                         (" (unreadable)", "dim")), 4)


def _findings(console: Console, doc: dict[str, Any]) -> None:
    findings = doc.get("findings") or []
    if not findings:
        _heading(console, "ok", "Findings: no known problem matched")
        return
    worst = next(s for s in SEVERITY_ORDER if any(f["severity"] == s for f in findings))
    counts = ", ".join(f"{n} {s}{'s' if n != 1 and s != 'info' else ''}" for s in SEVERITY_ORDER
                       if (n := sum(f["severity"] == s for f in findings)))
    _heading(console, worst, f"Findings: {counts}")
    for sev in SEVERITY_ORDER:
        for f in (f for f in findings if f["severity"] == sev):
            _finding(console, f)


def _finding(console: Console, f: dict[str, Any]) -> None:
    sev = f["severity"]
    head = Text.assemble((f"{MARKS[sev]} {sev:<7} ", _STYLE[sev]), (f["id"], "bold"), "  ",
                         f["title"])
    _indented(console, head, 4)
    _indented(console, Text(f["message"]), 6)
    loc = location_text(f)
    if loc:
        _unwrapped(console, Text.assemble(("at ", "dim"), loc), 6)
    fix = f.get("fix") or {}
    if fix.get("text"):
        _indented(console, Text.assemble(("fix: ", "green"), fix["text"]), 6)
    for cmd in fix.get("commands") or []:
        _indented(console, Text.assemble(("$ ", "dim"), cmd), 8)
    for ref in f.get("references") or []:
        # Printed unwrapped: a URL broken across lines is no longer clickable.
        console.print(Text.assemble("      ", ("see: ", "dim"), f"{ref['url']} ({ref['type']})"),
                      soft_wrap=True)
    if f.get("confidence") and f["confidence"] != "verified":
        _indented(console, Text(f"confidence: {f['confidence']}", style="dim"), 6)


def _undetermined(console: Console, doc: dict[str, Any]) -> None:
    items = doc.get("undetermined") or []
    if not items:
        return
    _heading(console, "undetermined",
             f"Undetermined: {len(items)} rule(s) could not be decided (facts unknown)")
    for u in items:
        _indented(console, Text.assemble(("? ", _STYLE["undetermined"]), (u["id"], "bold"), "  ",
                                         u["title"]), 4)
        needs = ", ".join(e["fact"] for e in u.get("unknown") or [])
        _indented(console, Text.assemble(("needs: ", "dim"), needs), 6)
    _indented(console, Text("Why those facts are unknown:", style="dim"), 4)
    for reason, names in unknown_reasons(doc):
        _indented(console, Text.assemble((", ".join(names), "bold"), ": ", reason), 6)


def _smoke(console: Console, doc: dict[str, Any]) -> None:
    status, rows = smoke_rows(doc)
    facts = doc.get("facts") or {}
    if facts.get("runtime.inspected") is True and "smoke.ran" not in facts and not rows:
        return  # a live inspection has no smoke step; saying "not run" would only be noise
    failed = facts.get("smoke.status") not in (None, "ok") and facts.get("smoke.ran") is not False
    mark = "error" if failed else ("ok" if rows or facts.get("smoke.status") == "ok" else "info")
    _heading(console, mark, f"Smoke step: {status}")
    if rows:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="dim", no_wrap=True)
        table.add_column()
        for key, value in rows:
            table.add_row(key, Text(value))
        _indented(console, table, 4)
