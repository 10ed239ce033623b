"""``fp8-doctor plan``: its flags and its command (wiring only; the search is
:mod:`preflight.plan`).

Exit codes: 0 when the plan clears everything (or nothing depends on a version), 1 when a finding
stays, 2 a usage error.
"""

from __future__ import annotations

import argparse

from preflight.commands import console
from preflight.commands.args import add_job, add_output, options_from


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_job(p)
    p.add_argument("--rules", action="append", default=[], metavar="DIR", help=argparse.SUPPRESS)
    add_output(p, "plan")   # the output flags every command shares (issue 24 item 9)
    p.add_argument("--allow-downgrade", action="store_true",
                   help="also consider older releases (an older release may predate the feature)")


def run(args: argparse.Namespace) -> int:
    """0 when the plan clears everything (or nothing depends on a version), 1 when a finding
    stays."""
    from preflight.plan.render import render_json, render_text
    from preflight.plan.run import plan
    from preflight.render.output import finish_output

    options = options_from(args)
    with console.progress(args) as progress:
        result = plan(options, progress=progress, downgrades=args.allow_downgrade)
    text = render_json(result) if args.format == "json" else render_text(result)
    console.write(finish_output(text, args.format, redact=not args.no_redact), args.output)
    return 1 if result.uncleared else 0
