"""``fp8-doctor snapshot``: the facts of this machine (and of the job's configs) as JSON, for
``check --snapshot`` anywhere else (:mod:`preflight.snapshot`)."""

from __future__ import annotations

import argparse
import json

from preflight.commands import console
from preflight.commands.args import add_job, file_name, options_from


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_job(p)
    p.add_argument("-o", "--output", metavar="FILE", type=file_name, help="write to FILE instead of stdout")
    p.add_argument("--no-redact", action="store_true", help="do not mask secrets, home directory, hostnames and GPU UUIDs")
    p.set_defaults(detail="normal")   # progress: no -q here


def run(args: argparse.Namespace) -> int:
    from preflight.api import collect_facts
    from preflight.snapshot import snapshot_document

    with console.progress(args) as progress:
        facts, probes, extra, inputs = collect_facts(options_from(args), progress=progress)
    doc = snapshot_document(facts, probes, inputs, extra, redact=not args.no_redact)
    console.write(json.dumps(doc, indent=2, sort_keys=False), args.output)
    return 0
