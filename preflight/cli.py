"""The ``fp8-doctor`` command line: argument parsing, wiring and exit codes only.

Exit codes (DESIGN.md contract): 0 no finding at or above ``--fail-on``; 1 such findings;
2 usage error (bad flag, a path that does not exist, a bad ``--assume``); 3 internal error.
stdout carries the report only; progress and errors go to stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from preflight import __version__
from preflight.findings import FAIL_ON_CHOICES
from preflight.probes.configs.detect import KINDS as CONFIG_KINDS
from preflight.report import EXIT_INTERNAL, EXIT_USAGE

FORMATS = ("text", "json", "markdown", "sarif")



class UsageError(Exception):
    """A problem with what the user asked for; exit code 2."""


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _fatal(code: int, msg: str, tip: str | None = None) -> NoReturn:
    _stderr(f"fp8-doctor: error: {msg}")
    if tip:
        _stderr(f"  tip: {tip}")
    raise SystemExit(code)


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


def _add_output(p: argparse.ArgumentParser, *, formats: Sequence[str] = FORMATS,
                default: str = "text") -> None:
    p.add_argument("--format", choices=formats, default=default, help="output format (default: %(default)s)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--no-redact", action="store_true",
                   help="do not mask secrets, home directory, hostnames and GPU UUIDs")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour in text output (default: auto: on a TTY or when FORCE_COLOR is "
                        "set, never when NO_COLOR is)")
    detail = p.add_mutually_exclusive_group()
    detail.add_argument("-q", "--quiet", dest="detail", action="store_const", const="quiet",
                        default="normal",
                        help="text: one line per finding (path:line: severity ID title)")
    detail.add_argument("-v", "--verbose", dest="detail", action="store_const", const="verbose",
                        help="text: every reference, each finding's evidence, the probes")


def _add_collect(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="config files or folders of the job (accelerate, DeepSpeed, llm-foundry, "
                        "torchtitan, Megatron, Lightning, HF Trainer, NeMo); with none, "
                        "accelerate's default config is used if present")
    p.add_argument("--kind", choices=CONFIG_KINDS, help="force the config kind of every PATH")
    p.add_argument("--snapshot", metavar="FILE", help="use facts from a snapshot instead of probing")
    p.add_argument("--assume", action="append", default=[], metavar="KEY=VALUE",
                   help="plan an environment: gpu=H100 | gpu.cc=8.9 | gpu.count=8 | pkg.NAME=VER")
    p.add_argument("--deep", action="store_true",
                   help="also import torch / transformer_engine / torchao / deepspeed in a child "
                        "process and classify failures")
    p.add_argument("--example", action="store_true",
                   help="add the bundled example job (accelerate + DeepSpeed ZeRO-3 + TE FP8)")


def build_parser() -> argparse.ArgumentParser:
    """The whole CLI, as one argparse tree."""
    parser = argparse.ArgumentParser(
        prog="fp8-doctor",
        description="Preflight checks for FP8 training: probes, known-bug rules, FP8 smoke step.",
        epilog="exit codes: 0 ok, 1 findings at or above --fail-on, 2 usage error, 3 internal error",
    )
    parser.add_argument("--version", action="version", version=f"fp8-doctor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("check", help="probe, read configs, evaluate rules, run the smoke step")
    _add_collect(p)
    smoke = p.add_mutually_exclusive_group()
    smoke.add_argument("--smoke", dest="smoke", action="store_true", default=None,
                       help="run the FP8 smoke step (default: when an FP8-capable GPU and torch are present)")
    smoke.add_argument("--no-smoke", dest="smoke", action="store_false", help="skip the smoke step")
    p.add_argument("--smoke-timeout", type=positive_seconds, default=120.0, metavar="S",
                   help="seconds before the smoke child is killed (default: %(default)s)")
    p.add_argument("--fail-on", choices=FAIL_ON_CHOICES, default="error",
                   help="lowest severity that makes the exit code 1 (default: %(default)s)")
    p.add_argument("--rules", action="append", default=[], metavar="DIR",
                   help="load rules from DIR instead of the bundled rule base (repeatable)")
    _add_output(p)

    p = sub.add_parser("snapshot", help="write the facts of this machine (and configs) as JSON")
    _add_collect(p)
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--no-redact", action="store_true", help="keep paths, hostnames and UUIDs")

    p = sub.add_parser("report", help="a redacted Markdown support report (check + all facts)")
    _add_collect(p)
    smoke = p.add_mutually_exclusive_group()
    smoke.add_argument("--smoke", dest="smoke", action="store_true", default=False,
                       help="include the smoke step (default: not included)")
    # Accepted so that one flag set works for `check` and `report` alike (it is the default).
    smoke.add_argument("--no-smoke", dest="smoke", action="store_false",
                       help="leave the smoke step out (the default)")
    p.add_argument("--fail-on", choices=FAIL_ON_CHOICES, default="never",
                   help="lowest severity that makes the exit code 1 (default: %(default)s)")
    p.add_argument("--rules", action="append", default=[], metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--smoke-timeout", type=positive_seconds, default=120.0,
                   help=argparse.SUPPRESS)
    _add_output(p, default="markdown")

    p = sub.add_parser("smoke", help="run only the FP8 smoke step")
    from preflight.smoke.cli import add_arguments as add_smoke_arguments

    add_smoke_arguments(p)

    p = sub.add_parser("rules", help="list, show, lint or test the rule base")
    from preflight.engine.commands import add_arguments as add_rules_arguments

    add_rules_arguments(p)

    p = sub.add_parser("completion", help="print a shell completion script (bash, zsh, fish)")
    p.add_argument("shell", choices=("bash", "zsh", "fish"),
                   help='the shell; e.g. eval "$(fp8-doctor completion bash)" in ~/.bashrc')
    return parser


def _write(text: str, output: str | None) -> None:
    data = text if text.endswith("\n") else text + "\n"
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(data)
        except OSError as exc:
            raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None
        _stderr(f"wrote {output}")
        return
    try:
        try:
            sys.stdout.write(data)
        except UnicodeEncodeError:
            # A terminal that cannot show the check marks still gets the report.
            sys.stdout.flush()
            sys.stdout.buffer.write(data.encode(sys.stdout.encoding or "utf-8", "replace"))
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`| head`): the report's exit code still stands. Point stdout
        # at /dev/null so the interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _use_color(args: argparse.Namespace) -> bool:
    """--color wins; then no colour into a file (-o) or under NO_COLOR (no-color.org); then
    FORCE_COLOR (force-color.org: any non-empty value; CI logs that render ANSI); then a TTY."""
    choice = getattr(args, "color", "auto")
    if choice == "always":
        return True
    if choice == "never" or getattr(args, "output", None) or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def text_width(args: argparse.Namespace) -> int | None:
    """Columns for text output: COLUMNS when set (what shells and CI export), else the terminal's
    when stdout is one, else None (the renderer's fixed 100, stable for logs and -o files)."""
    cols = os.environ.get("COLUMNS", "").strip()
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    if not getattr(args, "output", None) and sys.stdout.isatty():
        import shutil

        return shutil.get_terminal_size().columns
    return None


def _check_paths(paths: Sequence[str]) -> None:
    for path in paths:
        if not os.path.exists(path):
            raise UsageError(f"no such file or folder: {path}")


def _options(args: argparse.Namespace):  # -> CheckOptions
    from preflight.api import CheckOptions

    paths = list(args.paths)
    _check_paths(paths)
    if args.snapshot and not os.path.isfile(args.snapshot):
        raise UsageError(f"no such snapshot file: {args.snapshot}")
    if getattr(args, "example", False):
        from preflight.examples import example_paths

        paths.extend(example_paths())
    smoke_options = None
    if getattr(args, "smoke", False) is not False:
        from preflight.smoke import SmokeOptions

        smoke_options = SmokeOptions(timeout=getattr(args, "smoke_timeout", 120.0))
    return CheckOptions(
        paths=tuple(paths), kind=args.kind, snapshot=args.snapshot,
        assume=_parse_assume(args.assume) or None,
        smoke=getattr(args, "smoke", False), smoke_options=smoke_options, deep=args.deep,
        rules_paths=tuple(getattr(args, "rules", []) or ()),
        fail_on=getattr(args, "fail_on", "error"),
    )


def _cmd_check(args: argparse.Namespace) -> int:
    from preflight.api import run_check

    from preflight.render import render
    from preflight.smoke.progress import progress_display

    with progress_display(f"fp8-doctor {args.command}") as progress:
        report = run_check(_options(args), progress=progress)
    _write(render(report, args.format, redact=not args.no_redact, color=_use_color(args),
                  width=text_width(args), detail=getattr(args, "detail", "normal")),
           args.output)
    return report.exit_code()


def _cmd_snapshot(args: argparse.Namespace) -> int:
    from preflight.api import collect_facts
    from preflight.snapshot import snapshot_document

    facts, probes, extra, inputs = collect_facts(_options(args), progress=_stderr)
    doc = snapshot_document(facts, probes, inputs, extra, redact=not args.no_redact)
    _write(json.dumps(doc, indent=2, sort_keys=False), args.output)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        if args.command in ("check", "report"):
            return _cmd_check(args)
        if args.command == "snapshot":
            return _cmd_snapshot(args)
        if args.command == "smoke":
            from preflight.smoke.cli import main as smoke_main

            return smoke_main(args, write=_write)
        if args.command == "rules":
            from preflight.engine.commands import main as rules_main

            return rules_main(args, write=_write)
        if args.command == "completion":
            from preflight.completion import script

            _write(script(parser, args.shell), None)
            return 0
    except UsageError as exc:
        _fatal(EXIT_USAGE, str(exc))
    except KeyboardInterrupt:
        _fatal(130, "interrupted")
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no tracebacks for users
        from preflight.errors import UserInputError

        if isinstance(exc, UserInputError):
            _fatal(EXIT_USAGE, str(exc))
        if os.environ.get("FP8_DOCTOR_DEBUG"):
            raise
        _fatal(EXIT_INTERNAL, f"internal error: {type(exc).__name__}: {exc}",
               "re-run with FP8_DOCTOR_DEBUG=1 for the traceback and report it")
    parser.error(f"unknown command {args.command}")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
