"""The parser pieces every front door shares, and the one way from flags to a check's options.

``check``, ``report``, ``snapshot``, ``plan``, ``speedup`` and the multi-rank mode
(``python -m preflight.cluster``) describe the job with :func:`add_job` (PATHs, ``--kind``,
``--snapshot``, ``--assume``, ...) and take their output flags from :func:`add_output`; what
decides the run (``--fail-on``, ``--rules``, ``--strict``, ``--ignore``, ``--baseline``,
``[tool.fp8-doctor]``) comes from :func:`add_policy`. :func:`add_job` gives every option a
default, so :func:`options_from` reads one typed record (:class:`JobArgs`) whatever the command,
and builds ``api.CheckOptions`` in one place (issue 25 item 1: the multi-rank mode built its own,
without project config, baseline, ignore or strict).

Standard library only at import, like :mod:`preflight.cli`, so that Ctrl-C while the package
loads is still caught there.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, NoReturn

from preflight.errors import UserInputError
from preflight.outputs import COMMAND_FORMATS

if TYPE_CHECKING:
    from preflight.api import CheckOptions
    from preflight.reading.types import ConfigProblem


class Formatter(argparse.HelpFormatter):
    """argparse's help formatter, its width found as ``shutil.get_terminal_size`` finds it
    (COLUMNS, else the terminal of ``sys.__stdout__``, else 80; less 2, as argparse does) without
    importing ``shutil``: every parser with an argument builds a formatter, and ``shutil``'s
    imports (bz2, lzma) were ~2 ms of each check (issue 26 item 4)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _columns() - 2 if width is None else width)


def _columns() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns or 80


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose error messages have their control characters escaped: they quote
    what was typed (``unrecognized arguments: --x<ESC>[2J``), and every message fp8-doctor writes
    is escaped (issue 21 item 5; red team: argparse's own errors were not). Subparsers are of
    the parser's class, so one class covers every command; so is its :class:`Formatter`."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> NoReturn:
        from preflight.render.sanitize import clean_text

        tip = usage_tip(message)
        super().error(clean_text(message) + (f"\n  tip: {tip}" if tip else ""))


USAGE_TIPS = {
    "explain": "one rule's cause, fix and sources: fp8-doctor rules show ID",
    "--redact": "every output is redacted by default; --no-redact turns it off",
    "--json": "--format json",
    "--sarif": "--format sarif",
}
"""What a newcomer types that fp8-doctor spells otherwise (newcomer sessions: ``explain ID`` as
in other linters, ``report --redact``), and where it is."""


def usage_tip(message: str) -> str | None:
    """The tip for an argparse error that names one of :data:`USAGE_TIPS`' words: an invalid
    command (``invalid choice: 'explain'``) or an unrecognised flag."""
    words: list[str] = []
    if message.startswith("unrecognized arguments:"):
        words = message.split()[2:]
    elif "invalid choice: " in message:
        words = [message.split("invalid choice: ", 1)[1].split(" ", 1)[0].strip("'\"")]
    return next((USAGE_TIPS[w] for w in words if w in USAGE_TIPS), None)


MAX_TIMEOUT_S = 7 * 24 * 3600.0
"""The longest timeout any flag takes: a child or rank silent for a week is hung, not slow, and
subprocess / timedelta / threading.Timer overflow on huge values (an OverflowError long after
the flag was read)."""



def file_name(value: str) -> str:
    """A FILE argument: an empty name is a usage error (redteam: ``-o ""`` fell back to stdout)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("an empty file name")
    return value

def positive_seconds(text: str) -> float:
    """argparse type: a timeout in seconds, > 0 and at most :data:`MAX_TIMEOUT_S`.

    ``nan`` fails ``> 0``; ``inf`` would pass it and switch the hang protection off, which is
    what the timeout is for, so it is refused too, as is anything past a week.
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, not {text}")
    if value > MAX_TIMEOUT_S:
        raise argparse.ArgumentTypeError(
            f"must be at most {MAX_TIMEOUT_S:.0f} seconds (7 days), not {text}")
    return value


QUIET_HELP = {
    "smoke": "text: one line per check that did not pass, then the verdict; no progress",
    "plan": "no progress on stderr (the plan is printed as it is)",
    "speedup": "no progress on stderr (the result is printed as it is)",
}
VERBOSE_HELP = {
    "smoke": "text: also the raw measurements",
}


def add_output(p: argparse.ArgumentParser, command: str, *, default: str = "text") -> None:
    """The output flags every command shares (issue 24 item 9): ``--format`` (the command's
    formats, :data:`preflight.outputs.COMMAND_FORMATS`), ``-o``, ``--no-redact``, ``--color``,
    ``-q`` / ``-v``."""
    formats = COMMAND_FORMATS[command]
    p.add_argument("--format", choices=formats, default=default,
                   help="output format (default: %(default)s)")
    p.add_argument("-o", "--output", metavar="FILE", type=file_name,
                   help="write the output to FILE instead of stdout (atomically; never one of "
                        "the inputs)")
    p.add_argument("--no-redact", action="store_true",
                   help="do not mask secrets, home directory, hostnames and GPU UUIDs")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour in text output (default: auto: on a TTY or when FORCE_COLOR is "
                        "set, never when NO_COLOR is)")
    detail = p.add_mutually_exclusive_group()
    detail.add_argument("-q", "--quiet", dest="detail", action="store_const", const="quiet",
                        default="normal",
                        help=QUIET_HELP.get(command, "text: one line per finding (path:line: "
                                                     "severity ID title), then a summary line; "
                                                     "no progress"))
    detail.add_argument("-v", "--verbose", dest="detail", action="store_const", const="verbose",
                        help=VERBOSE_HELP.get(command, "text: every reference, each finding's "
                                                       "evidence, every undetermined rule, the "
                                                       "probes"))


def set_job_defaults(p: argparse.ArgumentParser) -> None:
    """A default for every option :func:`options_from` reads, so that a command without a flag
    gets what the flag's absence means (its own flags, added after, set their own)."""
    p.set_defaults(**_DEFAULTS)


def add_job(p: argparse.ArgumentParser) -> None:
    """The job a command judges: PATHs, ``--kind``, ``--snapshot``, ``--assume``, ``--deep``,
    ``--example`` (and :func:`set_job_defaults`)."""
    set_job_defaults(p)
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="config files, launch scripts, training scripts or folders of the job "
                        "(of the frameworks --kind lists); with none, accelerate's default "
                        "config is used if present")
    from preflight.frameworks import KINDS as CONFIG_KINDS

    p.add_argument("--kind", choices=CONFIG_KINDS, metavar="KIND",
                   help="force the config kind of every PATH: " + ", ".join(CONFIG_KINDS))
    p.add_argument("--snapshot", metavar="FILE", help="use facts from a snapshot instead of probing")
    p.add_argument("--assume", action="append", default=[], metavar="KEY=VALUE",
                   help="plan an environment: gpu=H100 | gpu.cc=8.9 | gpu.count=8 | pkg.NAME=VER "
                        "(repeatable)")
    p.add_argument("--deep", action="store_true",
                   help="also import torch / transformer_engine / torchao / deepspeed in a child "
                        "process and classify failures")
    p.add_argument("--example", action="store_true",
                   help="add the bundled example job (accelerate + DeepSpeed ZeRO-3 + TE FP8)")


def add_cache_arguments(p: argparse.ArgumentParser) -> None:
    """The smoke children's bytecode cache (preflight/smoke/cache.py), for check and smoke."""
    p.add_argument("--cache-dir", metavar="DIR", default=None,
                   help="bytecode cache of the smoke children, used where the installed torch "
                        "has none (default: $FP8_DOCTOR_CACHE_DIR, $XDG_CACHE_HOME/fp8-doctor or "
                        "~/.cache/fp8-doctor; the only place fp8-doctor writes besides -o)")
    p.add_argument("--no-cache", action="store_true",
                   help="write no bytecode cache (also FP8_DOCTOR_NO_CACHE=1)")


def add_strictness(p: argparse.ArgumentParser) -> None:
    """``--strict``, ``--ignore`` and ``--baseline`` (check and the multi-rank mode)."""
    p.add_argument("--strict", action="store_true", default=None,
                   help="also fail (exit 1) on rules left undetermined at or above --fail-on, "
                        "and when the job asks for FP8 but the smoke step could not run")
    p.add_argument("--ignore", action="append", default=[], metavar="ID",
                   help="drop a rule's findings and undetermined result (repeatable)")
    p.add_argument("--baseline", metavar="FILE",
                   help="accepted findings (from --write-baseline): reported as baselined, "
                        "they do not fail the run")


def add_project_config(p: argparse.ArgumentParser) -> None:
    """``--no-project-config``: a command that has it reads ``[tool.fp8-doctor]`` without it."""
    p.add_argument("--no-project-config", action="store_true", default=False,
                   help="ignore [tool.fp8-doctor] in the nearest pyproject.toml")


@dataclass(frozen=True)
class JobArgs:
    """What :func:`options_from` reads from a parsed command line, typed (every front door's
    namespace has each field: :func:`add_job` gives the defaults)."""

    paths: list[str]
    kind: str | None
    snapshot: str | None
    assume: list[str]
    deep: bool
    example: bool
    smoke: bool | None           # None: auto (an FP8-capable GPU and torch present)
    smoke_timeout: float
    no_cache: bool
    cache_dir: str | None
    fail_on: str | None          # None: [tool.fp8-doctor]'s, else error
    rules: list[str]
    no_bundled_rules: bool
    strict: bool | None          # None: [tool.fp8-doctor]'s, else off
    ignore: list[str]
    baseline: str | None
    no_project_config: bool      # True for every command without --no-project-config

    @classmethod
    def of(cls, args: argparse.Namespace) -> JobArgs:
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})


_DEFAULTS: dict[str, object] = {"kind": None, "snapshot": None, "assume": [], "deep": False, "example": False,
             "smoke": False, "smoke_timeout": 120.0, "no_cache": False, "cache_dir": None,
             "fail_on": None, "rules": [], "no_bundled_rules": False, "strict": None,
             "ignore": [], "baseline": None, "no_project_config": True}
"""What a command without the flag means: no smoke step, fail on errors, the bundled rules only,
no ``[tool.fp8-doctor]`` (read by ``check`` and the multi-rank mode only)."""


def parse_assume(items: Sequence[str]) -> dict[str, str]:
    """``--assume KEY=VALUE`` items as a mapping; a malformed one is a usage error."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UserInputError(f"--assume expects KEY=VALUE, got {item!r} "
                                 "(e.g. gpu=H100, gpu.cc=8.9, gpu.count=8, pkg.torch=2.5.1)")
        out[key.strip()] = value.strip()
    return out


def options_from(args: argparse.Namespace) -> CheckOptions:
    """The options of one check run from any front door's parsed flags: paths checked, the
    example added, ``[tool.fp8-doctor]`` under what the command line says."""
    from preflight.api import CheckOptions
    from preflight.jobs.formats import split_entry

    a = JobArgs.of(args)
    paths = list(a.paths)
    for path in paths:
        if not os.path.exists(split_entry(path)[0]):   # config_registry.py::llama3_8b
            raise UserInputError(f"no such file or folder: {path}")
    if a.snapshot and not os.path.isfile(a.snapshot):
        raise UserInputError(f"no such snapshot file: {a.snapshot}")
    if a.example:
        from preflight.examples import example_paths

        paths.extend(example_paths())
    smoke_options = None
    if a.smoke is not False:
        from preflight.smoke import SmokeOptions

        smoke_options = SmokeOptions(timeout=a.smoke_timeout, cache=not a.no_cache,
                                     cache_dir=a.cache_dir)
    assume = parse_assume(a.assume)
    fail_on, strict, rules, ignore = a.fail_on or "error", bool(a.strict), a.rules, a.ignore
    baseline = a.baseline
    notices: tuple[ConfigProblem, ...] = ()
    if not a.no_project_config:
        # [tool.fp8-doctor] gives defaults; what the command line says wins (projectconfig.py).
        from preflight.projectconfig import find_pyproject, load_project_config

        project = load_project_config(find_pyproject(a.paths))
        fail_on = a.fail_on or project.fail_on or "error"
        strict = bool(a.strict if a.strict is not None else project.strict)
        rules = [*project.rules, *rules]
        ignore = [*project.ignore, *ignore]
        baseline = baseline or project.baseline
        assume = {**project.assume, **assume}
        notices = project.problems
    return CheckOptions(
        paths=tuple(paths), kind=a.kind, snapshot=a.snapshot, assume=assume or None,
        smoke=a.smoke, smoke_options=smoke_options, deep=a.deep, rules_paths=tuple(rules),
        fail_on=fail_on, strict=strict, bundled_rules=not a.no_bundled_rules,
        ignore=tuple(ignore), baseline=baseline, notices=notices)
