"""Text, Markdown and JSON output of a speed-up trial (``fp8-doctor speedup``, measured)."""

from __future__ import annotations

import json

from preflight.speedup import table_lines
from preflight.speedup.trial import Side, TrialReport


def _gib(value: int | float | None) -> str:
    return f"{value / 2**30:.1f} GiB" if isinstance(value, (int, float)) else "-"


def _ms(value: float | None) -> str:
    return f"{value * 1e3:.1f} ms" if isinstance(value, (int, float)) else "-"


def lines(report: TrialReport, md: bool = False) -> list[str]:
    s = report.shape
    out = [("## " if md else "") + "FP8 speed-up, measured: a short training trial of this model",
           ""]
    if s is None:
        return out + [f"Undetermined: {report.why_not}"]
    out.append(f"Model: hidden {s.hidden}, FFN {s.ffn}{' (gated)' if s.gated else ''}, "
               f"{s.heads} heads ({s.kv_heads} KV), {s.layers} layers, vocab {s.vocab}; "
               f"micro-batch {s.micro_batch} x seq {s.seq} = {s.tokens} tokens")
    where = report.child.get("device_name")
    # "Trained" only when a step was timed: a trial that never ran says what it would have run
    out.append(("Trained" if report.bf16 else "Not trained (would train)")
               + f": BF16 and {report.backend} {report.recipe}"
               f"{', compiled (torch.compile)' if report.compiled else ', eager'}"
               + (f", on {where}" if where else "")
               + (f", at depths {' and '.join(map(str, report.depths))}" if report.depths else ""))
    out.append("")
    rows = _measured_rows(report)
    if rows:
        head = ["depth", "BF16 step", "FP8 step", "BF16 peak", "FP8 peak"]
        out += table_lines(head, rows, md)
        out.append("")
    if report.bf16 and report.fp8 and report.speedup is not None:
        out.append(f"At {s.layers} layers" + (" (extrapolated)" if s.layers not in report.depths
                                             else "") + ":")
        out += [_side_line("BF16", report.bf16), _side_line("FP8", report.fp8), "",
                f"Step speed-up: {report.speedup:.2f}x", "", report.verdict]
    else:
        out.append(f"Undetermined: {report.why_not}")
    out += [f"  note: {n}" for n in report.notes]
    return out


def _side_line(name: str, side: Side) -> str:
    return (f"  {name + ':':6}{_ms(side.step_s)} a step, {side.tokens_per_s:,.0f} tokens/s, "
            f"peak memory {_gib(side.peak_bytes)}")


def _measured_rows(report: TrialReport) -> list[list[str]]:
    if not report.bf16:
        return []
    rows = []
    for depth in sorted(report.bf16.measured):
        fp8 = report.fp8
        rows.append([str(depth), _ms(report.bf16.measured.get(depth)),
                     _ms(fp8.measured.get(depth) if fp8 else None),
                     _gib(report.bf16.measured_peak.get(depth)),
                     _gib(fp8.measured_peak.get(depth) if fp8 else None)])
    return rows


def render_text(report: TrialReport) -> str:
    return "\n".join(lines(report)) + "\n"


def render_markdown(report: TrialReport) -> str:
    return "\n".join(lines(report, md=True)) + "\n"


def render_json(report: TrialReport) -> str:
    return json.dumps(report.to_dict(), indent=2)
