"""``python -m preflight.cluster`` (``__main__.py`` starts here): fp8-doctor on every rank of a job,
compared on rank 0.

Run it under the launcher the job uses::

    torchrun --nproc-per-node 8 --nnodes 4 ... -m preflight.cluster [PATH ...] [--smoke]
    srun --ntasks-per-node 8 python -m preflight.cluster ...
    accelerate launch -m preflight.cluster ...

Every rank collects its facts through the normal pipeline (and runs the smoke step on its own GPU
with ``--smoke``); rank 0 gathers them over gloo, merges them into ``cluster.*`` facts, runs the
rules and prints the report. Rank 0 exits with the report's exit code (0 / 1); the other ranks
exit 0 once their facts are delivered, and 3 when fp8-doctor itself failed on them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from preflight.base.digits import ascii_digits
from preflight.commands import console
from preflight.commands.args import (
    Parser,
    add_output,
    add_project_config,
    add_strictness,
    options_from,
    positive_seconds,
    set_job_defaults,
)
from preflight.findings import FAIL_ON_CHOICES
from preflight.frameworks import KINDS as CONFIG_KINDS
from preflight.outputs import EXIT_INTERNAL, EXIT_USAGE

if TYPE_CHECKING:
    from preflight.api import CheckOptions
    from preflight.cluster.collect import Local
    from preflight.cluster.gather import Gathered
    from preflight.cluster.merge import ClusterView
    from preflight.report import Report

# A rank still busy this long after --timeout is stuck (a probe or smoke child that ignores its
# own timeout, a dead store): it leaves, so the launcher ends the job instead of waiting forever.
WATCHDOG_GRACE_S = 90.0
def positive_mib(text: str) -> int:
    """argparse type: a whole number of MiB, at least 1 (0 would time an empty collective)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of MiB: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 MiB, not {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="python -m preflight.cluster",
        description="Run fp8-doctor on every rank (torchrun / srun / accelerate launch) and "
                    "report what differs between ranks.",
        epilog="exit codes (rank 0): 0 ok, 1 findings at or above --fail-on, 2 usage error, "
               "3 internal error")
    set_job_defaults(p)
    p.set_defaults(command="cluster")
    p.add_argument("paths", nargs="*", metavar="PATH", help="config files or folders of the job")
    p.add_argument("--kind", choices=CONFIG_KINDS, help="force the config kind of every PATH")
    p.add_argument("--assume", action="append", default=[], metavar="KEY=VALUE",
                   help="plan an environment (applied on every rank that receives the flag)")
    p.add_argument("--deep", action="store_true", help="also run the child-process import probe")
    # The same pair as `fp8-doctor check`, but off by default: a smoke step on every rank of a
    # large job is a decision to make, not a side effect of checking the cluster.
    smoke = p.add_mutually_exclusive_group()
    smoke.add_argument("--smoke", dest="smoke", action="store_true", default=False,
                       help="run the FP8 smoke step on every rank, each on its own GPU")
    smoke.add_argument("--no-smoke", dest="smoke", action="store_false",
                       help="skip the smoke step (the default)")
    p.add_argument("--smoke-timeout", type=positive_seconds, default=120.0, metavar="S")
    p.add_argument("--collectives", action="store_true",
                   help="also run an all-reduce and a uint8 all-gather across all ranks")
    p.add_argument("--collectives-backend", choices=("nccl", "gloo"), default="nccl",
                   help="nccl on the GPUs (default) or gloo on CPU tensors")
    p.add_argument("--collectives-mib", type=positive_mib, default=16, metavar="MIB",
                   help="MiB per rank moved by each collective (default: %(default)s)")
    p.add_argument("--timeout", type=positive_seconds, default=180.0, metavar="S",
                   help="seconds rank 0 waits for every rank to report; ranks not ready by then "
                        "are named in the report (default: %(default)s)")
    p.add_argument("--fail-on", choices=FAIL_ON_CHOICES, default=None,
                   help="lowest severity that makes the exit code 1 (default: error, or "
                        "fail-on in [tool.fp8-doctor])")
    p.add_argument("--rules", action="append", default=[], metavar="DIR",
                   help="a rule pack: add the rules in DIR to the bundled ones (repeatable)")
    # The policy flags of `fp8-doctor check`, and its [tool.fp8-doctor] defaults (issue 25).
    add_strictness(p)
    add_project_config(p)
    add_output(p, "cluster")  # -o: rank 0 writes the report
    return p


def _log(rank: int, msg: str) -> None:
    print(f"fp8-doctor[rank {rank}]: {msg}", file=sys.stderr, flush=True)


def _options(args: argparse.Namespace) -> CheckOptions:
    """The check options of every rank, as ``fp8-doctor check`` builds them (``options_from``:
    ``[tool.fp8-doctor]``, ``--strict``, ``--ignore``, ``--baseline``); ``-o`` never an input."""
    from preflight.outfile import refuse_input_as_output

    options = options_from(args)
    refuse_input_as_output(args.output, configs=list(options.paths),
                           rules=list(options.rules_paths))
    return options


def _report(options: CheckOptions, local: Local | None, cluster_facts: dict[str, Any],
            smoke: dict[str, Any] | None) -> Report:
    from preflight.api import evaluate_options
    from preflight.facts import Facts

    facts, probes, extra, inputs = local if local else (Facts(), (), [], [])
    facts = facts.merged(cluster_facts, source="cluster")
    # --rules packs add to the bundled rules, --baseline, --ignore and --strict apply, as for
    # `fp8-doctor check` (issue 12, issue 25).
    return evaluate_options(facts, options, extra=extra, probes=probes, smoke=smoke,
                            inputs=inputs)


def _render(args: argparse.Namespace, report: Report, view: ClusterView) -> str:
    from preflight.cluster.view import render_section, section_json

    redact = not args.no_redact
    color = console.use_color(args)
    if args.format == "json":
        doc = json.loads(report.render("json", redact=redact))
        from preflight.render.sanitize import clean_document

        doc["cluster"] = clean_document(section_json(view, redact=redact))
        return json.dumps(doc, indent=2, ensure_ascii=False)
    from preflight.render import render

    detail = args.detail
    body = render(report, args.format, redact=redact, color=color,
                  width=console.text_width(args), detail=detail)
    from preflight.outputs import BY_NAME

    if BY_NAME[args.format].document or (args.format == "text" and detail == "quiet"):
        # A document for tools (SARIF) stays one document; -q: one line per finding (the
        # ranks' differences are findings too).
        return body
    # render_section redacts cell by cell itself: scrubbing the laid-out table afterwards would
    # shorten cells (/home/u/x -> ~/x) and shift the columns after them.
    from preflight.render.sanitize import clean_text  # host and GPU names come from outside

    return clean_text(render_section(view, args.format, redact=redact)) + "\n" + body


def _watchdog(rank: int, seconds: float) -> None:
    def expire() -> None:
        _log(rank, f"still running {seconds:.0f}s after start; giving up (exit {EXIT_INTERNAL})")
        os._exit(EXIT_INTERNAL)  # the main thread is stuck; a normal exit would wait for it

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()


class _Progress:
    """What this rank has so far, for a report when the launcher stops the job mid-way."""

    def __init__(self) -> None:
        self.info: Any = None
        self.options: Any = None
        self.store: Any = None
        self.payload: dict[str, Any] | None = None
        self.local: Any = None


def run(args: argparse.Namespace, progress: _Progress | None = None) -> int:
    from preflight.cluster import collectives
    from preflight.cluster.collect import collect_rank
    from preflight.cluster.gather import (
        Gathered,
        LateRank,
        RankZeroSilent,
        announce,
        exchange,
        shared_mask_key,
    )
    from preflight.cluster.launch import open_store, rank_info

    got = progress or _Progress()
    info = got.info = rank_info()
    options = got.options = _options(args)
    deadline = time.monotonic() + args.timeout
    store = mask_key = None
    if info.world_size > 1:
        _watchdog(info.rank, args.timeout + WATCHDOG_GRACE_S)
        try:
            store = got.store = open_store(info, args.timeout)
        except Exception as exc:  # noqa: BLE001 - DistStoreError: rank 0's store is not there
            if info.rank == 0:
                raise
            _log(info.rank, f"could not reach rank 0's store at {info.master_addr}:"
                            f"{info.master_port} within {args.timeout:g}s ({type(exc).__name__}):"
                            " rank 0 has finished (this rank came too late) or never started; "
                            "this rank's facts are in no report")
            return 1
        announce(store, info)
        mask_key = shared_mask_key(store, info)
    payload, local = collect_rank(info, options, mask_key=mask_key)
    got.payload, got.local = payload, local
    if args.collectives:
        left = max(deadline - time.monotonic(), 10.0)
        result = collectives.run(info, timeout_s=left, backend=args.collectives_backend,
                                 mib=args.collectives_mib)
        # The report carries one line per rank; the child's traceback is for this rank's log.
        detail = result.pop("detail", None)
        if detail:
            _log(info.rank, f"collectives {result.get('status')}; the child's stderr:\n{detail}")
        payload["collectives"] = result
    if store is None:
        gathered: Gathered | None = Gathered({0: payload}, {})
    else:
        try:
            gathered = exchange(store, info, payload, deadline)
        except LateRank as exc:
            _log(info.rank, f"{exc}; rank 0 reports this rank as not answering")
            return 0
        except RankZeroSilent as exc:
            # Not fp8-doctor's fault (3) and not delivered (0): rank 0 is gone or stuck.
            _log(info.rank, f"{exc}; this rank's facts are in no report")
            return 1
    if info.rank != 0 or gathered is None:
        return 0
    return _finish_report(args, options, local, payload, gathered, info.world_size)


def _finish_report(args: argparse.Namespace, options: CheckOptions, local: Local | None,
                   payload: dict[str, Any] | None, gathered: Gathered, world_size: int) -> int:
    """Rank 0: merge what arrived, evaluate, render, write; the report's exit code."""
    from preflight.cluster import collectives
    from preflight.cluster.merge import merge

    t0 = time.perf_counter()
    view = merge(gathered.payloads, gathered.missing, world_size)
    cluster_facts = dict(view.facts)
    cluster_facts.update(collectives.merge_results(
        {r: p.get("collectives") for r, p in gathered.payloads.items()}))
    cluster_facts["cluster.timing"] = {
        "wait_s": round(gathered.wait_seconds, 4), "gather_s": round(gathered.gather_seconds, 4),
        "merge_s": round(time.perf_counter() - t0, 4)}
    report = _report(options, local, cluster_facts, (payload or {}).get("smoke"))
    text = _render(args, report, view)
    from preflight.outfile import write_report

    # atomic -o; a closed or full stdout is a usage error
    write_report(text, args.output, stdout_closed=console.stdout_closed())
    if args.output:
        _log(0, f"wrote {args.output}")
    return report.exit_code()


def _stopped_report(args: argparse.Namespace, got: _Progress) -> int:
    """Rank 0 after SIGTERM / SIGHUP (torchrun stops every rank when one fails; scancel): the
    report of what is known, each other rank a row saying how far it got. Never waits."""
    from preflight.base import signals
    from preflight.cluster.gather import Gathered, status

    signals.hold_signals()   # a second SIGTERM must not cut the report in half
    info = got.info
    signal = signals.reason()
    missing: dict[int, str] = {}
    ready: list[int] = []
    if got.store is not None:
        try:
            ready, missing = status(got.store, info)
        except Exception:  # noqa: BLE001 - the store went with the launcher
            missing = {r: "no word from it before the launcher stopped the job"
                       for r in range(1, info.world_size)}
    for r in ready:
        missing[r] = "was ready, but the launcher stopped the job before its facts reached rank 0"
    for r in list(missing):
        missing[r] = f"{missing[r]} ({signal})"
    payloads = {0: got.payload} if got.payload is not None else {}
    if got.payload is None:
        missing[0] = f"rank 0 was stopped while collecting its own facts ({signal})"
    else:
        missing.pop(0, None)
    _log(0, f"{signal}: reporting what rank 0 has")
    return _finish_report(args, got.options, got.local, got.payload,
                          Gathered(payloads, dict(sorted(missing.items()))), info.world_size)


def main(argv: Sequence[str] | None = None) -> int:
    # Closed descriptors re-opened on /dev/null: rank logs never land in the report.
    console.start()
    args = build_parser().parse_args(argv)
    from preflight.base import signals
    from preflight.errors import UserInputError

    raw = os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0")).strip()
    rank = int(raw) if ascii_digits(raw) and len(raw) < 9 else 0  # for log lines
    got = _Progress()
    try:
        return run(args, got)
    except UserInputError as exc:
        _log(rank, f"error: {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        if rank == 0 and got.info is not None and signals.terminated():
            return _stopped_report(args, got)
        return 130
    except Exception as exc:  # noqa: BLE001 - no tracebacks for users
        if os.environ.get("FP8_DOCTOR_DEBUG"):
            raise
        _log(rank, f"internal error: {type(exc).__name__}: {exc} "
                   "(re-run with FP8_DOCTOR_DEBUG=1 for the traceback)")
        return EXIT_INTERNAL
