"""The parser pieces every front door shares (check, report, snapshot, plan, speedup and the
multi-rank mode): output flags, the job's inputs, ``--assume`` and timeouts; and the flags of
``check`` and ``report``.

Standard library only at import, like :mod:`preflight.cli`, so that Ctrl-C while the package
loads is still caught there.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence

from preflight.errors import UserInputError as UsageError  # one usage-error type (exit 2)
from preflight.outputs import COMMAND_FORMATS, FORMATS

__all__ = ["COMMAND_FORMATS", "FORMATS", "UsageError", "add_output", "positive_seconds"]


MAX_TIMEOUT_S = 7 * 24 * 3600.0
"""The longest timeout any flag takes: a child or rank silent for a week is hung, not slow, and
subprocess / timedelta / threading.Timer overflow on huge values (an OverflowError long after
the flag was read)."""


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


def _parse_assume(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"--assume expects KEY=VALUE, got {item!r} "
                             "(e.g. gpu=H100, gpu.cc=8.9, gpu.count=8, pkg.torch=2.5.1)")
        out[key.strip()] = value.strip()
    return out


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
    p.add_argument("-o", "--output", metavar="FILE",
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


def _add_collect(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="config files, launch scripts, training scripts or folders of the job "
                        "(of the frameworks --kind lists); with none, accelerate's default "
                        "config is used if present")
    from preflight.frameworks import KINDS as CONFIG_KINDS

    p.add_argument("--kind", choices=CONFIG_KINDS, help="force the config kind of every PATH")
    p.add_argument("--snapshot", metavar="FILE", help="use facts from a snapshot instead of probing")
    p.add_argument("--assume", action="append", default=[], metavar="KEY=VALUE",
                   help="plan an environment: gpu=H100 | gpu.cc=8.9 | gpu.count=8 | pkg.NAME=VER")
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


def _add_check_arguments(p: argparse.ArgumentParser, fail_on_choices: Sequence[str]) -> None:
    _add_collect(p)
    smoke = p.add_mutually_exclusive_group()
    smoke.add_argument("--smoke", dest="smoke", action="store_true", default=None,
                       help="run the FP8 smoke step (default: when an FP8-capable GPU and torch are present)")
    smoke.add_argument("--no-smoke", dest="smoke", action="store_false", help="skip the smoke step")
    p.add_argument("--smoke-timeout", type=positive_seconds, default=120.0, metavar="S",
                   help="seconds before the smoke child is killed (default: %(default)s)")
    add_cache_arguments(p)
    p.add_argument("--fail-on", choices=fail_on_choices, default=None,
                   help="lowest severity that makes the exit code 1 (default: error, or "
                        "fail-on in [tool.fp8-doctor])")
    p.add_argument("--rules", action="append", default=[], metavar="DIR",
                   help="a rule pack: add the rules in DIR to the bundled ones (repeatable; "
                        "pack ids may use their own prefix, e.g. ACME-0001)")
    p.add_argument("--no-bundled-rules", action="store_true",
                   help="evaluate only the --rules packs, not the bundled rule base")
    p.add_argument("--strict", action="store_true", default=None,
                   help="also fail (exit 1) on rules left undetermined at or above --fail-on, "
                        "and when the job asks for FP8 but the smoke step could not run")
    p.add_argument("--ignore", action="append", default=[], metavar="ID",
                   help="drop a rule's findings and undetermined result (repeatable)")
    p.add_argument("--baseline", metavar="FILE",
                   help="accepted findings (from --write-baseline): reported as baselined, "
                        "they do not fail the run")
    p.add_argument("--write-baseline", metavar="FILE",
                   help="write this run's findings to FILE as the accepted baseline (exit 0)")
    p.add_argument("--no-project-config", action="store_true",
                   help="ignore [tool.fp8-doctor] in the nearest pyproject.toml")
    p.add_argument("--diff", action="store_true",
                   help="print the config fixes as a unified diff (git apply / patch -p1) "
                        "instead of the report; fixes that are no file edit are listed above it")
    add_output(p, "check")


def _add_report_arguments(p: argparse.ArgumentParser, fail_on_choices: Sequence[str]) -> None:
    _add_collect(p)
    smoke = p.add_mutually_exclusive_group()
    smoke.add_argument("--smoke", dest="smoke", action="store_true", default=False,
                       help="include the smoke step (default: not included)")
    # Accepted so that one flag set works for `check` and `report` alike (it is the default).
    smoke.add_argument("--no-smoke", dest="smoke", action="store_false",
                       help="leave the smoke step out (the default)")
    p.add_argument("--fail-on", choices=fail_on_choices, default="never",
                   help="lowest severity that makes the exit code 1 (default: %(default)s)")
    p.add_argument("--rules", action="append", default=[], metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--smoke-timeout", type=positive_seconds, default=120.0,
                   help=argparse.SUPPRESS)
    add_output(p, "report", default="markdown")
