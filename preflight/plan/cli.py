"""``fp8-doctor plan``: its flags and its command (wiring only; the search is
:mod:`preflight.plan`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def add_arguments(p: argparse.ArgumentParser,
                  add_collect: Callable[[argparse.ArgumentParser], None]) -> None:
    add_collect(p)
    p.add_argument("--rules", action="append", default=[], metavar="DIR", help=argparse.SUPPRESS)
    from preflight.cli_args import add_output

    add_output(p, "plan")   # the output flags every command shares (issue 24 item 9)
    p.add_argument("--allow-downgrade", action="store_true",
                   help="also consider older releases (an older release may predate the feature)")


def main(args: argparse.Namespace, options: Any, *, write: Callable[[str, str | None], None],
         progress: Callable[[str], None]) -> int:
    """0 when the plan clears everything (or nothing depends on a version), 1 when a finding
    stays."""
    from preflight.plan.render import render_json, render_text
    from preflight.plan.run import plan
    from preflight.render.output import finish_output

    result = plan(options, progress=progress, downgrades=args.allow_downgrade)
    text = render_json(result) if args.format == "json" else render_text(result)
    write(finish_output(text, args.format, redact=not args.no_redact), args.output)
    return 1 if result.uncleared else 0
