"""The ``fp8-doctor`` command line: argument parsing, wiring and exit codes only.

Exit codes (DESIGN.md contract): 0 no finding at or above ``--fail-on``; 1 such findings;
2 usage error (bad flag, a path that does not exist, a bad ``--assume``, ``-o`` naming an input,
and a report that cannot be delivered: unwritable ``-o``, stdout closed or full); 3 internal
error; 130 interrupted (Ctrl-C), from fp8-doctor's first line on (143 SIGTERM, 129 SIGHUP: see
preflight/_startup.py, where the console script starts).
stdout carries the report only; progress and errors go to stderr (nowhere when it is closed).
Module-level imports are stdlib only; the console script starts in :mod:`preflight._startup`,
whose handlers are in place before this module loads (issue 13 item 7, issue 21 item 8).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from preflight import __version__
from preflight.outputs import (  # the exit codes, defined once (stdlib-only module)
    EXIT_HELP,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
)

_STDOUT_CLOSED = False   # set by main() when descriptor 1 was closed at start-up


def _stderr(msg: str) -> None:
    # Messages quote paths and values from outside: no terminal escapes through them either.
    from preflight.render.sanitize import clean_text

    try:
        print(clean_text(msg), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass   # stderr gone mid-run (a closed pty): progress is optional, the report is not


def _fatal(code: int, msg: str, tip: str | None = None) -> NoReturn:
    _stderr(f"fp8-doctor: error: {msg}")
    if tip:
        _stderr(f"  tip: {tip}")
    raise SystemExit(code)


from preflight.cli_args import (  # noqa: E402 - stdlib-only module: Ctrl-C stays caught
    UsageError,
    _add_check_arguments,
    _add_collect,
    _add_report_arguments,
    _parse_assume,
    positive_seconds,
)

COMMANDS = ("check", "snapshot", "report", "plan", "speedup", "smoke", "rules", "completion")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole CLI, as one argparse tree.

    ``only``: the command about to run. Every command is still registered (help, completion and
    "invalid choice" see them all), but only that one gets its arguments, so a ``check`` does not
    import the smoke, plan, speedup and rules modules just to describe their flags (issue 14,
    item 4: start-up time).
    """
    from preflight.findings import FAIL_ON_CHOICES

    def full(command: str) -> bool:
        return only is None or only == command

    parser = argparse.ArgumentParser(
        prog="fp8-doctor",
        description="Preflight checks for FP8 training: probes, known-bug rules, FP8 smoke step.",
        epilog=EXIT_HELP,
    )
    parser.add_argument("--version", action="version", version=f"fp8-doctor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("check", help="probe, read configs, evaluate rules, run the smoke step")
    if full("check"):
        _add_check_arguments(p, FAIL_ON_CHOICES)

    p = sub.add_parser("snapshot", help="write the facts of this machine (and configs) as JSON")
    if full("snapshot"):
        _add_collect(p)
        p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
        p.add_argument("--no-redact", action="store_true",
                       help="keep paths, hostnames and UUIDs")

    p = sub.add_parser("report", help="a redacted Markdown support report (check + all facts)")
    if full("report"):
        _add_report_arguments(p, FAIL_ON_CHOICES)

    p = sub.add_parser("plan", help="the fewest package version changes that clear every "
                                    "version-gated finding, proven by re-evaluating the rules")
    if full("plan"):
        from preflight.plan.cli import add_arguments as add_plan_arguments

        add_plan_arguments(p, _add_collect)
    p = sub.add_parser("speedup", help="the FP8 speed-up to expect for this model: a short "
                                       "training trial in BF16 and FP8 on this GPU, and a verdict")
    if full("speedup"):
        from preflight.speedup.cli import add_arguments as add_speedup_arguments

        add_speedup_arguments(p, _add_collect, positive_seconds)

    p = sub.add_parser("smoke", help="run only the FP8 smoke step")
    if full("smoke"):
        from preflight.smoke.cli import add_arguments as add_smoke_arguments

        add_smoke_arguments(p)

    p = sub.add_parser("rules", help="list, show, lint or test the rule base")
    if full("rules"):
        from preflight.engine.commands import add_arguments as add_rules_arguments

        add_rules_arguments(p)

    p = sub.add_parser("completion", help="print a shell completion script (bash, zsh, fish)")
    p.add_argument("shell", choices=("bash", "zsh", "fish"),
                   help='the shell; e.g. eval "$(fp8-doctor completion bash)" in ~/.bashrc')
    return parser


def _write(text: str, output: str | None) -> None:
    from preflight.outfile import write_report

    write_report(text, output, stdout_closed=_STDOUT_CLOSED)
    if output:
        _stderr(f"wrote {output}")


def _guard_output(args: argparse.Namespace) -> None:
    """Refuse, before anything runs, an ``-o`` that names an input or a closed stdout."""
    from preflight.outfile import guard_output

    guard_output(args, stdout_closed=_STDOUT_CLOSED)


def _use_color(args: argparse.Namespace) -> bool:
    from preflight.render.terminal import use_color

    return use_color(args)


def text_width(args: argparse.Namespace) -> int | None:
    from preflight.render.terminal import text_width as width

    return width(args)


def _progress(args: argparse.Namespace):  # -> ContextManager[Progress]
    """Progress on stderr: a status line erased when done on a terminal; nothing with -q or into
    a pipe, a file or a log (pre-commit, CI); notes (rule warnings, files written) always."""
    from preflight.render.progress import progress_for

    return progress_for(f"fp8-doctor {args.command}",
                        quiet=getattr(args, "detail", "normal") == "quiet")


def _check_paths(paths: Sequence[str]) -> None:
    from preflight.jobs.formats import split_entry

    for path in paths:
        if not os.path.exists(split_entry(path)[0]):   # config_registry.py::llama3_8b
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

        smoke_options = SmokeOptions(timeout=getattr(args, "smoke_timeout", 120.0),
                                     cache=not getattr(args, "no_cache", False),
                                     cache_dir=getattr(args, "cache_dir", None))
    assume = _parse_assume(args.assume)
    fail_on = getattr(args, "fail_on", None) or "error"
    strict = bool(getattr(args, "strict", False))
    rules = list(getattr(args, "rules", []) or ())
    ignore = list(getattr(args, "ignore", []) or ())
    baseline = getattr(args, "baseline", None)
    notices: tuple = ()
    if args.command == "check" and not args.no_project_config:
        # [tool.fp8-doctor] gives defaults; what the command line says wins (projectconfig.py).
        from preflight.projectconfig import find_pyproject, load_project_config

        project = load_project_config(find_pyproject(args.paths))
        fail_on = args.fail_on or project.fail_on or "error"
        strict = bool(args.strict if args.strict is not None else project.strict)
        rules = [*project.rules, *rules]
        ignore = [*project.ignore, *ignore]
        baseline = baseline or project.baseline
        assume = {**project.assume, **assume}
        notices = project.problems
    return CheckOptions(
        paths=tuple(paths), kind=args.kind, snapshot=args.snapshot,
        assume=assume or None,
        smoke=getattr(args, "smoke", False), smoke_options=smoke_options, deep=args.deep,
        rules_paths=tuple(rules), fail_on=fail_on, strict=strict,
        bundled_rules=not getattr(args, "no_bundled_rules", False),
        ignore=tuple(ignore), baseline=baseline, notices=notices,
    )


def _cmd_check(args: argparse.Namespace) -> int:
    from preflight.api import run_check
    from preflight.render import render

    options = _options(args)
    target = getattr(args, "write_baseline", None)
    if target and args.output and os.path.abspath(target) == os.path.abspath(args.output):
        raise UsageError("--write-baseline and -o name the same file")
    with _progress(args) as progress:
        report = run_check(options, progress=progress)
    if getattr(args, "diff", False):
        from preflight.fixdiff import diff_output

        # Only the files of the job named here (never a snapshot's provenance); nothing to
        # apply is an empty patch (git apply --allow-empty, patch -p1), the notes on stderr.
        diff = diff_output(report, options.paths, redact=not args.no_redact)
        if diff.patch:
            _write(diff.patch, args.output)
        else:
            _stderr(diff.notes.rstrip("\n"))
            if args.output:
                from preflight.outfile import write_atomic

                write_atomic(args.output, "")
                _stderr(f"wrote {args.output} (empty)")
        return report.exit_code()
    _write(render(report, args.format, redact=not args.no_redact, color=_use_color(args),
                  width=text_width(args), detail=getattr(args, "detail", "normal")),
           args.output)
    if target:
        from preflight.baseline import write_baseline

        accepted = (*report.findings, *report.baselined)
        read = report.facts.get("config.files")
        files = [f["path"] for f in read if isinstance(f, dict) and "path" in f] \
            if isinstance(read, list) else []
        inputs = [*options.paths, *files, *options.rules_paths,
                  *(p for p in (options.snapshot, options.baseline) if p)]
        write_baseline(accepted, target, inputs)
        _stderr(f"wrote baseline {target} ({len(accepted)} finding(s) accepted)")
        return 0
    return report.exit_code()


def _cmd_snapshot(args: argparse.Namespace) -> int:
    from preflight.api import collect_facts
    from preflight.snapshot import snapshot_document

    with _progress(args) as progress:
        facts, probes, extra, inputs = collect_facts(_options(args), progress=progress)
    doc = snapshot_document(facts, probes, inputs, extra, redact=not args.no_redact)
    _write(json.dumps(doc, indent=2, sort_keys=False), args.output)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    # Start-up allocates tens of thousands of objects that all live to the end (modules, the
    # compiled rules), so the default threshold (700) runs ~80 young collections that find almost
    # nothing: ~10 ms of a 0.17 s check (issue 14, item 4). The higher threshold mypy sets for
    # the same reason (mypy/build.py) keeps collection on and bounded (peak RSS unchanged, 23 MB).
    old = gc.get_threshold()
    gc.set_threshold(200_000, 30, 30)
    try:
        return _main(argv)
    except KeyboardInterrupt:
        # Also while the package loads or argparse runs (issue 13: an early Ctrl-C printed a
        # traceback and the process died by the signal instead of exiting 130).
        from preflight._startup import reason

        _fatal(EXIT_INTERRUPTED, reason())
    finally:
        gc.set_threshold(*old)   # main() is also called in-process (tests, the cluster mode)


def entry() -> int:
    """The console script and ``python -m preflight``: :func:`main`, then a prompt exit.

    Once the report is out, every ``finally`` has run (temporary folders removed, children
    reaped) and the streams are flushed, the process leaves with ``os._exit``: tearing down the
    interpreter (its modules and the compiled rules) took 20-40 ms of a 0.2 s check, for nothing
    (issue 14, item 4). It is also what makes Ctrl-C exit 130: CPython 3.11 remembers a
    KeyboardInterrupt that passed through ``exec`` (dataclasses build their ``__init__`` with
    it) even when it was caught, and would end the process by SIGINT instead of with our code.
    A ``SystemExit`` that carries a message (not a number) leaves the ordinary way.
    The console script starts in :func:`preflight._startup.entry` (module path, signals), which
    calls this; :func:`preflight._startup.finish` kills any child still running and turns 130
    into 128 + the signal when SIGTERM or SIGHUP ended the run (issue 21 item 8).
    """
    try:
        code: int = main()
    except SystemExit as exc:
        if exc.code is not None and not isinstance(exc.code, int):
            raise
        code = exc.code or 0
    if _flush_failed(sys.stdout) and code in (0, 1):
        code = EXIT_USAGE   # the end of the report could not be delivered (a full disk, EPIPE)
    _flush_failed(sys.stderr)
    from preflight._startup import finish

    finish(code)


def _flush_failed(stream: object) -> bool:
    """True when writing out what is buffered failed; a closed or absent stream has nothing."""
    try:
        stream.flush()   # type: ignore[attr-defined]
    except OSError:
        return True
    except (ValueError, AttributeError):
        pass
    return False


def _main(argv: Sequence[str] | None) -> int:
    global _STDOUT_CLOSED
    from preflight.outfile import guard_std_streams

    _STDOUT_CLOSED = "stdout" in guard_std_streams()
    words = list(sys.argv[1:] if argv is None else argv)
    first = words[0] if words and words[0] in COMMANDS else None
    parser = build_parser(None if first == "completion" else first)
    args = parser.parse_args(words)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        _guard_output(args)
        if args.command in ("check", "report"):
            return _cmd_check(args)
        if args.command == "snapshot":
            return _cmd_snapshot(args)
        if args.command in ("plan", "speedup"):
            from preflight.plan.cli import main as plan_main
            from preflight.speedup.cli import main as speedup_main

            args.smoke = False
            command = plan_main if args.command == "plan" else speedup_main
            with _progress(args) as progress:
                return command(args, _options(args), write=_write, progress=progress)
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
        raise
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
    raise SystemExit(entry())
