"""``fp8-doctor smoke``: run only the FP8 smoke step and print its results (text or JSON).

Text output is a verdict per check: the measured value, the threshold it had to meet
(preflight/registry/smoke_verdict.py) and pass / fail, grouped by backend. Progress (the stage each
child is in) goes to stderr, as a rich status line on a terminal.

Exit codes (the DESIGN.md contract, applied to this command): **0** every check passed, or the
step was skipped because it cannot run here (no CUDA device: the output says why and that
``--device cpu`` runs the same checks emulated; ``--strict`` makes a skip **1**); **1** a check
failed (numerics out of band, FP8 not engaged, a backend named with ``--backend`` not
importable, the speed stage raised); **2** a bad ``--shape`` or ``--timeout``; **3** the smoke
child crashed or hung (the output names the stage and shows the end of its stderr). Output is
redacted like every other report (an import error or a child's stderr can carry a token or a home
path); ``--no-redact`` opts out.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from typing import Any

from preflight.commands.args import add_cache_arguments, add_output, positive_seconds
from preflight.smoke import BACKENDS, SmokeOptions

Write = Callable[[str, "str | None"], None]
_SHAPE = re.compile(r"^\s*(\d+)\s*[xX*,]\s*(\d+)\s*[xX*,]\s*(\d+)\s*$")


def parse_shape(text: str) -> tuple[int, int, int]:
    """'MxKxN' -> (M, K, N); argparse turns the ValueError into a usage error (exit 2)."""
    m = _SHAPE.match(text)
    if not m or min(int(g) for g in m.groups()) <= 0:
        raise argparse.ArgumentTypeError(f"expected MxKxN with positive integers, got {text!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.epilog = ("exit codes: 0 every check passed, or skipped here (1 with --strict), 1 a check "
                "failed, 2 usage error, 3 the smoke child crashed or hung")
    p.add_argument("--backend", action="append", choices=BACKENDS, default=None,
                   help="backend to check (repeatable; default: auto = raw _scaled_mm plus "
                        "torchao and Transformer Engine when installed)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cuda (default) or cpu: the same numerics on the CPU (torchao emulated)")
    p.add_argument("--shape", action="append", type=parse_shape, default=[], metavar="MxKxN",
                   help="a GEMM shape of your job for the FP8-vs-BF16 speed check (repeatable)")
    p.add_argument("--all-gpus", action="store_true",
                   help="run the GEMM checks on every visible GPU (one child per GPU)")
    p.add_argument("--timeout", type=positive_seconds, default=120.0, metavar="S",
                   help="seconds before a smoke child is killed (default: %(default)s)")
    p.add_argument("--no-speed", dest="speed", action="store_false",
                   help="skip the FP8-vs-BF16 speed measurement")
    add_cache_arguments(p)
    add_output(p, "smoke")   # the output flags every command shares (issue 24 item 9)
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when the smoke step could not run here (default: 0, with the "
                        "reason)")


def _facts_for_shapes() -> dict[str, Any]:
    """GPU facts for --all-gpus (count only); never imports torch in this process."""
    try:
        from preflight.probes import collect_all
    except ImportError:
        return {}
    out: dict[str, Any] = {}
    try:
        for result in collect_all():
            out.update({k: v for k, v in result.facts.items() if k.startswith("gpu.")})
    except Exception:  # noqa: BLE001 - without probes the child counts the GPUs itself
        return {}
    return out


from preflight.outputs import EXIT_FINDINGS as EXIT_FAILED  # noqa: E402 - one set of codes
from preflight.outputs import EXIT_INTERNAL as EXIT_CRASH  # noqa: E402
from preflight.outputs import EXIT_OK  # noqa: E402


def exit_code(facts: dict[str, Any], *, strict: bool = False) -> int:
    """The command's exit code (module docstring): 0 ok or skipped (1 under --strict), 1 a check
    failed, 3 the child crashed or hung."""
    if facts.get("smoke.ran") is False:
        return EXIT_FAILED if strict else EXIT_OK
    status = facts.get("smoke.status")
    if status == "ok":
        return EXIT_OK
    if status in ("crash", "timeout"):
        return EXIT_CRASH
    return EXIT_FAILED


def render_text(facts: dict[str, Any], details: dict[str, Any] | None = None, *,
                width: int | None = None, strict: bool = False, color: bool = False,
                detail: str = "normal") -> str:
    """A verdict per check (measured value, threshold, pass/fail), grouped by backend, then the
    outcome and exit code in one line. ``detail``: ``quiet`` (``-q``: one line per check that
    did not pass, then that line), ``verbose`` (``-v``: also the raw measurements)."""
    from rich.text import Text

    from preflight.registry.smoke_verdict import NOTE, PASS, smoke_checks, smoke_headline
    from preflight.render._common import smoke_rows, tail_text
    from preflight.render.text import WIDTH, console_for, finish_text, indented, smoke_table

    console, buf = console_for(color, width or WIDTH)
    code = exit_code(facts, strict=strict)
    if detail == "quiet":
        for c in smoke_checks(facts):
            if c.verdict not in (PASS, NOTE):
                console.print(Text(f"{c.verdict} {c.group}: {c.name}: {c.measured}"
                                   + (f" (need {c.threshold})" if c.threshold != "-" else "")),
                              soft_wrap=True)
        console.print(Text(f"fp8-doctor smoke: {smoke_headline(facts)} · exit {code}"),
                      soft_wrap=True)
        return finish_text(buf)
    if facts.get("smoke.ran") is False:
        console.print(Text(f"fp8-doctor smoke: {smoke_headline(facts)}"))
        console.print(Text(f"exit {code}: nothing was checked here" +
                           ("" if strict else " (--strict makes a skip exit 1)")))
        return finish_text(buf)
    torch = facts.get("smoke.torch_version", "?")
    seconds = facts.get("smoke.duration_s", 0) or 0
    console.print(Text(f"fp8-doctor smoke: {smoke_headline(facts)} · torch {torch}, "
                       f"{float(seconds):.1f} s"))
    if facts.get("smoke.error"):
        indented(console, Text(f"error: {facts['smoke.error']}"), 2)
    checks = smoke_checks(facts)
    if checks:
        indented(console, smoke_table(checks), 2)
    details = details or {}
    for key in ("backends_note", "speed_note"):
        if details.get(key):
            indented(console, Text(f"note: {details[key]}", style="dim"), 2)
    if detail == "verbose":
        for key, value in smoke_rows({"facts": facts, "smoke": details})[1]:
            indented(console, Text(f"{key}: {value}", style="dim"), 2)
    tail = details.get("stderr_tail")
    if code == EXIT_CRASH and isinstance(tail, str) and tail.strip():
        indented(console, Text("child stderr (end):"), 2)
        indented(console, Text(tail_text(tail, 1200)), 4)
    verdict = {EXIT_OK: "every check passed", EXIT_FAILED: "a check failed",
               EXIT_CRASH: "the smoke child crashed or hung before finishing"}[code]
    console.print(Text(f"exit {code}: {verdict}"))
    return finish_text(buf)


def run(args: argparse.Namespace) -> int:
    from preflight.commands import console

    return main(args, write=console.write)


def main(args: argparse.Namespace, write: Write) -> int:
    from preflight.render.progress import progress_for
    from preflight.smoke import run

    options = SmokeOptions(timeout=args.timeout, backends=tuple(args.backend or ("auto",)),
                           device=args.device, shapes=tuple(args.shape), all_gpus=args.all_gpus,
                           speed=args.speed, cache=not args.no_cache, cache_dir=args.cache_dir)
    facts = _facts_for_shapes() if args.all_gpus else {}
    detail = getattr(args, "detail", "normal")
    with progress_for("fp8-doctor smoke", quiet=detail == "quiet") as progress:
        outcome = run(facts, options, progress=progress)
    strict = bool(getattr(args, "strict", False))
    from preflight.render.terminal import text_width, use_color

    write(render(outcome.facts, outcome.details, args.format,
                 redact=not getattr(args, "no_redact", False), width=text_width(args),
                 strict=strict, color=use_color(args), detail=detail), args.output)
    return exit_code(outcome.facts, strict=strict)


def render(facts: dict[str, Any], details: dict[str, Any], fmt: str, *, redact: bool = True,
           width: int | None = None, strict: bool = False, color: bool = False,
           detail: str = "normal") -> str:
    """The command's output, redacted as ``check`` redacts its reports (same redactor, same
    two passes: the key-aware document pass, then the content pass over the finished text).
    JSON adds ``checks`` (the verdict rows) and ``exit_code``."""
    from dataclasses import asdict

    from preflight.registry.smoke_verdict import smoke_checks
    from preflight.render import render_document

    def as_json(doc: dict[str, Any]) -> str:
        out = dict(doc, checks=[asdict(c) for c in smoke_checks(doc["facts"])],
                   exit_code=exit_code(doc["facts"], strict=strict))
        return json.dumps(out, indent=2)

    return render_document(
        {"facts": facts, "smoke": details},
        lambda doc: as_json(doc) if fmt == "json" else render_text(
            doc["facts"], doc.get("smoke"), width=width, strict=strict, color=color,
            detail=detail),
        redact=redact)
