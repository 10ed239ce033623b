"""What every command's output promises, defined once: the formats and the exit codes.

Why (issue 24 item 9, structure review P3): the formats list lived in ``cli_args.FORMATS`` and
``render.FORMATS``, the exit codes in ``cli.py``, ``report.py`` and ``smoke/cli.py`` (a test kept
two of them equal), and each sub-command declared its own ``--format`` / ``-o`` (``fp8-doctor
smoke --color never`` was a usage error while ``check`` took it). Every command now takes its
output flags from ``commands.args.add_output`` with its formats from :data:`COMMAND_FORMATS`.

Standard library only (the CLI imports it before anything else, so that Ctrl-C stays caught).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    """A report format: its ``--format`` name and the module under ``preflight/render/`` whose
    ``render(doc, options) -> str`` writes it. ``document``: the output is one document for
    tools (nothing may be printed around it: the multi-rank mode adds its table to the others)."""

    name: str
    module: str
    document: bool = False


REPORT_FORMATS: tuple[Format, ...] = (
    Format("text", "text"),
    Format("json", "json_", document=True),
    Format("markdown", "markdown"),
    Format("sarif", "sarif", document=True),
    Format("junit", "junit", document=True),
)
"""The one table of report formats (issue 25 item 6): the CLI's choices, the dispatch in
``preflight.render`` and the multi-rank mode read it. A new format is a module and a line here."""

FORMATS = tuple(f.name for f in REPORT_FORMATS)
"""Every report format (``check``, ``report``, the multi-rank mode)."""
BY_NAME = {f.name: f for f in REPORT_FORMATS}

COMMAND_FORMATS: dict[str, tuple[str, ...]] = {
    "check": FORMATS,
    "report": FORMATS,
    "cluster": FORMATS,
    "smoke": ("text", "json"),
    "plan": ("text", "json"),
    "speedup": ("text", "json", "markdown"),
}
"""The formats each command can write: ``check``, ``report`` and the multi-rank mode every report
format, the others those their own renderers write."""

EXIT_OK = 0
EXIT_FINDINGS = 1          # findings at or above --fail-on; smoke: a check failed
EXIT_USAGE = 2             # bad flags or inputs; an -o naming an input; a report not delivered
EXIT_INTERNAL = 3          # fp8-doctor failed; smoke: the child crashed or hung
EXIT_INTERRUPTED = 130     # Ctrl-C
EXIT_HELP = ("exit codes: 0 ok, 1 findings at or above --fail-on, 2 usage error (also: -o names "
             "an input, or the report cannot be written), 3 internal error, 130 interrupted "
             "(143 terminated)")
"""The exit-code line of ``--help`` (commands with codes of their own say how they differ)."""
