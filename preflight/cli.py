"""The ``fp8-doctor`` command line: argument parsing, wiring and exit codes only.

Exit codes (DESIGN.md contract): 0 no finding at or above ``--fail-on``; 1 such findings;
2 usage error (bad flag, a path that does not exist, a bad ``--assume``, ``-o`` naming an input,
and a report that cannot be delivered: unwritable ``-o``, stdout closed or full); 3 internal
error; 130 interrupted (Ctrl-C), at any moment after the interpreter has started.
stdout carries the report only; progress and errors go to stderr (nowhere when it is closed).
Module-level imports are stdlib only, so that Ctrl-C while the package loads is still caught
by :func:`main` (issue 13, item 7).
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

FORMATS = ("text", "json", "markdown", "sarif")
EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 2, 3, 130   # = preflight.report's; a test checks
_STDOUT_CLOSED = False   # set by main() when descriptor 1 was closed at start-up


class UsageError(Exception):
    """A problem with what the user asked for; exit code 2."""


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
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the report to FILE instead of stdout (atomically; never one of "
                        "the inputs)")
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


def build_parser() -> argparse.ArgumentParser:
    """The whole CLI, as one argparse tree."""
    from preflight.findings import FAIL_ON_CHOICES

    parser = argparse.ArgumentParser(
        prog="fp8-doctor",
        description="Preflight checks for FP8 training: probes, known-bug rules, FP8 smoke step.",
        epilog="exit codes: 0 ok, 1 findings at or above --fail-on, 2 usage error (also: -o names "
               "an input, or the report cannot be written), 3 internal error, 130 interrupted",
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
    p.add_argument("--fail-on", choices=FAIL_ON_CHOICES, default=None,
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

    p = sub.add_parser("plan", help="the fewest package version changes that clear every "
                                    "version-gated finding, proven by re-evaluating the rules")
    _add_collect(p)
    p.add_argument("--rules", action="append", default=[], metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output format (default: %(default)s)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the plan to FILE instead of stdout")
    p.add_argument("--allow-downgrade", action="store_true",
                   help="also consider older releases (an older release may predate the feature)")

    p = sub.add_parser("speedup", help="the FP8 speed-up to expect for this model: its GEMMs "
                                       "timed in BF16 and FP8 on this GPU, and a verdict")
    _add_collect(p)
    p.add_argument("--model-config", metavar="FILE",
                   help="the model's Hugging Face config.json (when the job configs do not say)")
    p.add_argument("--seq", type=int, metavar="N", help="sequence length (overrides the configs)")
    p.add_argument("--micro-batch", type=int, metavar="N",
                   help="micro-batch size per rank (overrides the configs)")
    p.add_argument("--backend", choices=("torchao", "te"),
                   help="FP8 backend to time (default: the job's, else torchao)")
    p.add_argument("--recipe", choices=("tensorwise", "rowwise", "delayed", "current", "mxfp8"),
                   help="FP8 recipe to time (default: the job's)")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                   help="output format (default: %(default)s)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the result to FILE instead of stdout")
    p.add_argument("--chart", metavar="PNG", help="also draw FP8 vs BF16 by GEMM shape (matplotlib)")
    p.add_argument("--timeout", type=positive_seconds, default=300.0, metavar="S",
                   help="seconds before the timing child is killed (default: %(default)s)")
    p.add_argument("--measure-layers", action="store_true",
                   help="also time each linear whole as torchao runs it alone (compiles each; "
                        "an upper bound on the cast cost, slower)")

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
    from preflight.outfile import write_report

    write_report(text, output, stdout_closed=_STDOUT_CLOSED)
    if output:
        _stderr(f"wrote {output}")


def _guard_output(args: argparse.Namespace) -> None:
    """Refuse, before anything runs, an ``-o`` that names an input or a closed stdout."""
    from preflight.outfile import OutputError, refuse_input_as_output

    output = getattr(args, "output", None)
    if not output and _STDOUT_CLOSED:
        raise OutputError("stdout is closed: the report has nowhere to go (use -o FILE)")
    configs = list(getattr(args, "paths", None) or ())
    configs += [p for p in (getattr(args, "model_config", None),) if p]
    rules = list(getattr(args, "rules", None) or ())
    if args.command == "rules":
        rules += configs   # `rules lint PATH`: the positional paths are rule files
        configs = []
    elif args.command in ("check", "report", "snapshot") and not configs \
            and not getattr(args, "snapshot", None):
        from preflight.jobs.read import default_paths

        configs = default_paths()   # accelerate's default config, read when no path is given
    refuse_input_as_output(output, configs=configs, snapshot=getattr(args, "snapshot", None),
                           rules=rules)
    if getattr(args, "chart", None):      # speedup --chart is a second output: same rule
        refuse_input_as_output(args.chart, configs=configs + [output or ""],
                               snapshot=getattr(args, "snapshot", None), rules=rules)


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
    assume = _parse_assume(args.assume)
    fail_on = getattr(args, "fail_on", None) or "error"
    strict = bool(getattr(args, "strict", False))
    rules = list(getattr(args, "rules", []) or ())
    ignore = list(getattr(args, "ignore", []) or ())
    baseline = getattr(args, "baseline", None)
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
    return CheckOptions(
        paths=tuple(paths), kind=args.kind, snapshot=args.snapshot,
        assume=assume or None,
        smoke=getattr(args, "smoke", False), smoke_options=smoke_options, deep=args.deep,
        rules_paths=tuple(rules), fail_on=fail_on, strict=strict,
        bundled_rules=not getattr(args, "no_bundled_rules", False),
        ignore=tuple(ignore), baseline=baseline,
    )


def _cmd_check(args: argparse.Namespace) -> int:
    from preflight.api import run_check
    from preflight.render import render
    from preflight.smoke.progress import progress_display

    options = _options(args)
    target = getattr(args, "write_baseline", None)
    if target and args.output and os.path.abspath(target) == os.path.abspath(args.output):
        raise UsageError("--write-baseline and -o name the same file")
    with progress_display(f"fp8-doctor {args.command}") as progress:
        report = run_check(options, progress=progress)
    if getattr(args, "diff", False):
        from preflight.fixdiff import render_diff

        _write(render_diff(report), args.output)
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

    facts, probes, extra, inputs = collect_facts(_options(args), progress=_stderr)
    doc = snapshot_document(facts, probes, inputs, extra, redact=not args.no_redact)
    _write(json.dumps(doc, indent=2, sort_keys=False), args.output)
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    from preflight.plan.render import render_json, render_text
    from preflight.plan.run import plan

    args.smoke = False
    result = plan(_options(args), progress=_stderr, downgrades=args.allow_downgrade)
    _write(render_json(result) if args.format == "json" else render_text(result), args.output)
    return 1 if result.uncleared else 0


def _cmd_speedup(args: argparse.Namespace) -> int:
    from preflight.api import collect_facts
    from preflight.speedup.render import render_json, render_markdown, render_text, write_chart
    from preflight.speedup.run import speedup
    from preflight.speedup.shapes import model_shape

    for value, flag in ((args.seq, "--seq"), (args.micro_batch, "--micro-batch")):
        if value is not None and not 0 < value <= 1 << 24:
            raise UsageError(f"{flag} must be between 1 and {1 << 24}, not {value}")
    if args.model_config and not os.path.isfile(args.model_config):
        raise UsageError(f"no such model config: {args.model_config}")
    args.smoke = False
    options = _options(args)
    facts, _, _, _ = collect_facts(options, progress=_stderr)
    shape = model_shape(facts.values, model_config=args.model_config, seq=args.seq,
                        micro_batch=args.micro_batch)
    _stderr("timing the GEMMs in a child process" if not hasattr(shape, "reason") else
            "no model shape: listing nothing to time")
    report = speedup(facts.values, shape, backend=args.backend, recipe=args.recipe,
                     timeout=args.timeout, measure_layers=args.measure_layers)
    chart = None
    if args.chart:
        why = write_chart(report, args.chart)
        if why:
            _stderr(f"no chart: {why}")
        else:
            chart = args.chart
            _stderr(f"wrote {args.chart}")
    text = (render_json(report) if args.format == "json" else
            render_markdown(report, chart) if args.format == "markdown" else render_text(report))
    _write(text, args.output)
    p = report.prediction
    return 1 if p is not None and p.step_speedup < 1.05 else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        # Also while the package loads or argparse runs (issue 13: an early Ctrl-C printed a
        # traceback and the process died by the signal instead of exiting 130).
        _fatal(EXIT_INTERRUPTED, "interrupted")


def entry() -> int:
    """The console script and ``python -m preflight``: :func:`main`, with a sure 130 on Ctrl-C.

    CPython 3.11 remembers a KeyboardInterrupt that passed through ``exec`` (dataclasses build
    their ``__init__`` with it) even when it was caught, and then ends the process by SIGINT
    instead of with our exit code; so an interrupted run leaves with ``os._exit(130)`` once its
    message is out and every ``finally`` (temporary folders, children) has run.
    """
    try:
        return main()
    except SystemExit as exc:
        if exc.code != EXIT_INTERRUPTED:
            raise
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(EXIT_INTERRUPTED)


def _main(argv: Sequence[str] | None) -> int:
    global _STDOUT_CLOSED
    from preflight.outfile import guard_std_streams

    _STDOUT_CLOSED = "stdout" in guard_std_streams()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        _guard_output(args)
        if args.command in ("check", "report"):
            return _cmd_check(args)
        if args.command == "snapshot":
            return _cmd_snapshot(args)
        if args.command == "speedup":
            return _cmd_speedup(args)
        if args.command == "plan":
            return _cmd_plan(args)
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
