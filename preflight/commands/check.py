"""``fp8-doctor check``: probe, read the job, evaluate the rules, run the smoke step, report.

Exit codes (DESIGN.md contract): 0 no finding at or above ``--fail-on``, 1 such findings (with
``--strict`` also undetermined rules and an FP8 job whose smoke step could not run), 2 a usage
error; ``--write-baseline`` exits 0. ``--diff`` prints the config fixes as a patch instead of the
report. ``report`` is this command with a Markdown report and no smoke step by default
(:mod:`.report`).
"""

from __future__ import annotations

import argparse
import os

from preflight.commands import console
from preflight.commands.args import (
    add_cache_arguments,
    add_job,
    add_output,
    add_project_config,
    add_strictness,
    file_name,
    options_from,
    positive_seconds,
)
from preflight.errors import UserInputError


def add_arguments(p: argparse.ArgumentParser) -> None:
    from preflight.findings import FAIL_ON_CHOICES

    add_job(p)
    smoke = p.add_mutually_exclusive_group()
    smoke.add_argument("--smoke", dest="smoke", action="store_true", default=None,
                       help="run the FP8 smoke step (default: when an FP8-capable GPU and torch are present)")
    smoke.add_argument("--no-smoke", dest="smoke", action="store_false", help="skip the smoke step")
    p.add_argument("--smoke-timeout", type=positive_seconds, default=120.0, metavar="S",
                   help="seconds before the smoke child is killed (default: %(default)s)")
    add_cache_arguments(p)
    p.add_argument("--fail-on", choices=FAIL_ON_CHOICES, default=None,
                   help="lowest severity that makes the exit code 1 (default: error, or "
                        "fail-on in [tool.fp8-doctor])")
    p.add_argument("--rules", action="append", default=[], metavar="DIR",
                   help="a rule pack: add the rules in DIR to the bundled ones (repeatable; "
                        "pack ids may use their own prefix, e.g. ACME-0001)")
    p.add_argument("--no-bundled-rules", action="store_true",
                   help="evaluate only the --rules packs, not the bundled rule base")
    add_strictness(p)
    p.add_argument("--write-baseline", metavar="FILE", type=file_name,
                   help="write this run's findings to FILE as the accepted baseline (exit 0)")
    add_project_config(p)
    p.add_argument("--diff", action="store_true",
                   help="print the config fixes as a unified diff (git apply / patch -p1) "
                        "instead of the report; fixes that are no file edit are listed above it")
    add_output(p, "check")


def run(args: argparse.Namespace) -> int:
    from preflight.api import run_check
    from preflight.render import render

    options = options_from(args)
    target = args.write_baseline
    if target and args.output and os.path.abspath(target) == os.path.abspath(args.output):
        raise UserInputError("--write-baseline and -o name the same file")
    with console.progress(args) as progress:
        report = run_check(options, progress=progress)
    if args.diff:
        from preflight.fixdiff import diff_output

        # Only the files of the job named here (never a snapshot's provenance); nothing to
        # apply is an empty patch (git apply --allow-empty, patch -p1), the notes on stderr.
        diff = diff_output(report, options.paths, redact=not args.no_redact)
        if diff.patch:
            console.write(diff.patch, args.output)
        else:
            console.say(diff.notes.rstrip("\n"))
            if args.output:
                from preflight.outfile import write_atomic

                write_atomic(args.output, "")
                console.say(f"wrote {args.output} (empty)")
        return report.exit_code()
    console.write(render(report, args.format, redact=not args.no_redact,
                         color=console.use_color(args), width=console.text_width(args),
                         detail=args.detail), args.output)
    if target:
        from preflight.baseline import write_baseline

        accepted = (*report.findings, *report.baselined)
        read = report.facts.get("config.files")
        files = [f["path"] for f in read if isinstance(f, dict) and "path" in f] \
            if isinstance(read, list) else []
        inputs = [*options.paths, *files, *options.rules_paths,
                  *(p for p in (options.snapshot, options.baseline) if p)]
        write_baseline(accepted, target, inputs)
        console.say(f"wrote baseline {target} ({len(accepted)} finding(s) accepted)")
        return 0
    return report.exit_code()
