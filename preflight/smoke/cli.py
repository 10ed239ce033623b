"""``fp8-doctor smoke``: run only the FP8 smoke step and print its results (text or JSON).

Exit code 0 when the smoke status is ``ok``, 1 when a check failed, the child crashed / hung
(the output says which) or nothing could be checked (no CUDA device here: ``--device cpu`` runs
the same checks emulated), 2 for a bad ``--shape`` or ``--timeout``. Output is redacted like every
other report (an import error or a child's stderr can carry a token or a home path);
``--no-redact`` opts out.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from typing import Any

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
    p.add_argument("--backend", action="append", choices=BACKENDS, default=None,
                   help="backend to check (repeatable; default: auto = raw _scaled_mm plus "
                        "torchao and Transformer Engine when installed)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cuda (default) or cpu: the same numerics on the CPU (torchao emulated)")
    p.add_argument("--shape", action="append", type=parse_shape, default=[], metavar="MxKxN",
                   help="a GEMM shape of your job for the FP8-vs-BF16 speed check (repeatable)")
    p.add_argument("--all-gpus", action="store_true",
                   help="run the GEMM checks on every visible GPU (one child per GPU)")
    from preflight.cli import positive_seconds  # the validator `check --smoke-timeout` uses

    p.add_argument("--timeout", type=positive_seconds, default=120.0, metavar="S",
                   help="seconds before a smoke child is killed (default: %(default)s)")
    p.add_argument("--no-speed", dest="speed", action="store_false",
                   help="skip the FP8-vs-BF16 speed measurement")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.add_argument("--no-redact", action="store_true",
                   help="do not mask secrets, home directory, hostnames and GPU UUIDs")


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


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.2f}"
    if isinstance(v, list):
        return ", ".join(map(str, v)) if v else "-"
    return str(v)


def render_text(facts: dict[str, Any]) -> str:
    """A short human summary: one line per fact, grouped by backend."""
    if facts.get("smoke.ran") is False:
        return f"fp8-doctor smoke: {facts.get('smoke.skip_reason', 'skipped')}"
    lines = [f"fp8-doctor smoke: {facts.get('smoke.status')} on {facts.get('smoke.device', '?')}"
             f" (torch {facts.get('smoke.torch_version', '?')}, {facts.get('smoke.duration_s', 0):.1f} s)"]
    if facts.get("smoke.error"):
        lines.append(f"  error: {facts['smoke.error']}")
    groups: dict[str, list[str]] = {}
    for name in sorted(facts):
        parts = name.split(".")
        if len(parts) >= 3:
            groups.setdefault(parts[1], []).append(f"    {'.'.join(parts[2:])}: {_fmt(facts[name])}")
    for group, rows in groups.items():
        lines.append(f"  {group}")
        lines.extend(rows)
    return "\n".join(lines)


def main(args: argparse.Namespace, write: Write) -> int:
    from preflight.smoke import run

    options = SmokeOptions(timeout=args.timeout, backends=tuple(args.backend or ("auto",)),
                           device=args.device, shapes=tuple(args.shape), all_gpus=args.all_gpus,
                           speed=args.speed)
    facts = _facts_for_shapes() if args.all_gpus else {}
    outcome = run(facts, options, progress=lambda msg: print(msg, file=sys.stderr, flush=True))
    write(render(outcome.facts, outcome.details, args.format,
                 redact=not getattr(args, "no_redact", False)), args.output)
    return 0 if outcome.facts.get("smoke.status") == "ok" else 1


def render(facts: dict[str, Any], details: dict[str, Any], fmt: str, *, redact: bool = True
           ) -> str:
    """The command's output, redacted as ``check`` redacts its reports (same redactor, same
    two passes: the key-aware document pass, then the content pass over the finished text)."""
    from preflight.render import render_document

    return render_document(
        {"facts": facts, "smoke": details},
        lambda doc: json.dumps(doc, indent=2) if fmt == "json" else render_text(doc["facts"]),
        redact=redact)
