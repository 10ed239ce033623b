"""``fp8-doctor speedup``: its flags and its command (wiring only; shapes, timing and the
prediction are in :mod:`preflight.speedup`).

Two modes. The default is the trial (:mod:`.trial`): the job's model trained for real at two small
depths in BF16 and FP8, extrapolated to its full depth. ``--quick`` is the modelled estimate
(:mod:`.run`: each GEMM timed alone, the rest modelled), which a validation on real training runs
found too far off to decide on (``run.QUICK_ERROR``, docs/gpu-results.md), so it is no longer the
default; its output says how far off it was.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from preflight.commands import console
from preflight.commands.args import add_job, add_output, file_name, options_from, positive_seconds
from preflight.errors import UserInputError
from preflight.speedup import pays

if TYPE_CHECKING:
    from preflight.api import CheckOptions

Write = Callable[[str, "str | None"], None]
Progress = Callable[[str], None]

TRIAL_TIMEOUT = 900.0
QUICK_TIMEOUT = 300.0


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_job(p)
    p.add_argument("--model-config", metavar="FILE",
                   help="the model's Hugging Face config.json (when the job configs do not say)")
    p.add_argument("--seq", type=int, metavar="N", help="sequence length (overrides the configs)")
    p.add_argument("--micro-batch", type=int, metavar="N",
                   help="micro-batch size per rank (overrides the configs)")
    p.add_argument("--backend", choices=("torchao", "te"),
                   help="FP8 backend to time (default: the job's, else torchao)")
    p.add_argument("--recipe", choices=("tensorwise", "rowwise", "delayed", "current", "mxfp8"),
                   help="FP8 recipe to time (default: the job's)")
    add_output(p, "speedup")   # the output flags every command shares (issue 24 item 9)
    p.add_argument("--chart", metavar="PNG", type=file_name,
                   help="also draw FP8 vs BF16 by GEMM shape (matplotlib)")
    p.add_argument("--timeout", type=positive_seconds, default=None, metavar="S",
                   help=f"seconds before the child is killed (default: {TRIAL_TIMEOUT:g} for the "
                        f"trial, {QUICK_TIMEOUT:g} with --quick)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--measure", dest="quick", action="store_false", default=False,
                      help="train the model for real at two small depths in BF16 and FP8 and "
                           "extrapolate to its depth (the default)")
    mode.add_argument("--quick", dest="quick", action="store_true",
                      help="a modelled estimate instead: each GEMM timed alone, the rest "
                           "modelled (faster, less accurate: the output says how far off)")
    p.add_argument("--compile", dest="compile", action="store_true", default=None,
                   help="trial: torch.compile the model (default: as the job does, intent.compile)")
    p.add_argument("--no-compile", dest="compile", action="store_false",
                   help="trial: run the model eager")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="trial: cuda (default) or cpu (FP8 emulated by torchao: tests the path, "
                        "not the speed)")
    p.add_argument("--measure-layers", action="store_true",
                   help="with --quick: also time each linear whole as torchao runs it alone "
                        "(compiles each; an upper bound on the cast cost, slower)")


def run(args: argparse.Namespace) -> int:
    """0 with a prediction that pays (or none possible, said), 1 when FP8 will not pay."""
    options = options_from(args)
    with console.progress(args) as progress:
        return _run(args, options, write=console.write, progress=progress)


def _run(args: argparse.Namespace, options: CheckOptions, *, write: Write,
         progress: Progress) -> int:
    from preflight.api import collect_facts
    from preflight.speedup.render import render_json, render_markdown, render_text, write_chart
    from preflight.speedup.run import speedup
    from preflight.speedup.shapes import model_shape

    for value, flag in ((args.seq, "--seq"), (args.micro_batch, "--micro-batch")):
        if value is not None and not 0 < value <= 1 << 24:
            raise UserInputError(f"{flag} must be between 1 and {1 << 24}, not {value}")
    if args.model_config and not os.path.isfile(args.model_config):
        raise UserInputError(f"no such model config: {args.model_config}")
    facts, _, _, _ = collect_facts(options, progress=progress)
    shape = model_shape(facts.values, model_config=args.model_config, seq=args.seq,
                        micro_batch=args.micro_batch, job_paths=options.paths)
    if not args.quick:
        return _trial(args, facts.values, shape, write=write, progress=progress)
    progress("timing the GEMMs in a child process" if not hasattr(shape, "reason") else
             "no model shape: listing nothing to time")
    report = speedup(facts.values, shape, backend=args.backend, recipe=args.recipe,
                     timeout=args.timeout or QUICK_TIMEOUT, measure_layers=args.measure_layers)
    chart = None
    if args.chart:
        why = write_chart(report, args.chart)
        if why:
            progress(f"no chart: {why}")
        else:
            chart = args.chart
            progress(f"wrote {args.chart}")
    from preflight.render.output import finish_output

    text = (render_json(report) if args.format == "json" else
            render_markdown(report, chart) if args.format == "markdown" else render_text(report))
    write(finish_output(text, args.format, redact=not args.no_redact), args.output)
    p = report.prediction
    return 1 if p is not None and not pays(p.step_speedup) else 0


def _trial(args: argparse.Namespace, facts: Any, shape: Any, *,
           write: Write, progress: Progress) -> int:
    """The default mode: the training trial; exit 1 when FP8 will not pay."""
    from preflight.speedup.run import backend_of
    from preflight.speedup.trial import trial
    from preflight.speedup.trial_render import render_json, render_markdown, render_text

    if args.chart:
        progress("no chart: --chart draws the GEMMs of --quick")
    backend, recipe = backend_of(facts)
    backend, recipe = args.backend or backend, args.recipe or recipe
    compiled = args.compile if args.compile is not None else facts.get("intent.compile") is True
    progress(f"training the model at two small depths, BF16 and {backend} {recipe} "
             f"({'compiled' if compiled else 'eager'}) in a child process")
    report = trial(shape, backend=backend, recipe=recipe, compiled=compiled, device=args.device,
                   timeout=args.timeout or TRIAL_TIMEOUT)
    text = (render_json(report) if args.format == "json" else
            render_markdown(report) if args.format == "markdown" else render_text(report))
    from preflight.render.output import finish_output

    # as --quick: control characters escaped, secrets and the home directory masked (redteam5)
    write(finish_output(text, args.format, redact=not args.no_redact), args.output)
    # "At the line" (within the trial's measured error of NOT_WORTH) will not pay reliably.
    return 1 if report.speedup is not None and not pays(report.speedup, report.error) else 0
