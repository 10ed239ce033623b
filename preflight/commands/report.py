"""``fp8-doctor report``: ``check`` as a redacted Markdown support report, with every fact.

The same run as :mod:`.check` (its ``run``), with other defaults: Markdown, no smoke step unless
``--smoke``, ``--fail-on never``, and no ``[tool.fp8-doctor]`` (a support report shows the
machine as it is).
"""

from __future__ import annotations

import argparse

from preflight.commands.args import add_job, add_output, positive_seconds
from preflight.commands.check import run

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    from preflight.findings import FAIL_ON_CHOICES

    add_job(p)
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
    add_output(p, "report", default="markdown")
    p.set_defaults(write_baseline=None, diff=False)   # check's run reads them
