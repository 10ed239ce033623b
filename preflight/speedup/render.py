"""Text, Markdown and JSON output of ``fp8-doctor speedup``, and the optional PNG chart of FP8
vs BF16 by GEMM shape (matplotlib, the ``plot`` extra; without it the chart is skipped, said)."""

from __future__ import annotations

import json
from typing import Any

from preflight.speedup import table_lines
from preflight.speedup.run import SpeedupReport


def gemm_rows(report: SpeedupReport) -> list[dict[str, Any]]:
    """Per GEMM: shape, count, and (when timed) BF16 / FP8 ms and the GEMM-only speed-up."""
    timed = {lin["name"]: lin for lin in report.timing.get("linears") or []}
    rows = []
    for g in report.gemms:
        row = dict(g)
        lin = timed.get(g["linear"])
        if lin and g["gemm"] in lin["bf16"]:
            b, f = lin["bf16"][g["gemm"]], lin["fp8"][g["gemm"]]
            row.update(bf16_ms=round(b * 1e3, 3), fp8_ms=round(f * 1e3, 3),
                       speedup=round(b / f, 2) if f else None)
        rows.append(row)
    return rows


def render_json(report: SpeedupReport) -> str:
    doc = report.to_dict()
    doc["gemms"] = gemm_rows(report)
    return json.dumps(doc, indent=2)


def _lines(report: SpeedupReport, md: bool) -> list[str]:
    s, p = report.shape, report.prediction
    out = [("## " if md else "") + "FP8 speed-up to expect for this model", ""]
    if s is None:
        return out + [f"Undetermined: {report.why_not}"]
    layers = s.layers if s.layers else "? (per layer)"
    out.append(f"Model: hidden {s.hidden}, FFN {s.ffn}{' (gated)' if s.gated else ''}, "
               f"{s.heads} heads ({s.kv_heads} KV), {layers} layers, vocab {s.vocab or '?'}; "
               f"micro-batch {s.micro_batch} x seq {s.seq} = {s.tokens} tokens per rank"
               + (f", TP {s.tp}" if s.tp > 1 else ""))
    out.append(f"FP8 recipe timed: {report.backend} {report.recipe}"
               + (f" on {report.timing.get('device_name')}" if report.timing.get("device_name")
                  else ""))
    out.append("")
    head = ["linear", "gemm", "M x K x N", "count", "BF16 ms", "FP8 ms", "speed-up"]
    rows = [[r["linear"], r["gemm"], f"{r['m']} x {r['k']} x {r['n']}", str(r["count"]),
             str(r.get("bf16_ms", "-")), str(r.get("fp8_ms", "-")),
             f"{r['speedup']:.2f}x" if r.get("speedup") else "-"] for r in gemm_rows(report)]
    out += table_lines(head, rows, md)
    out.append("")
    from preflight.speedup.run import timings_from

    for t in timings_from(report.timing):
        out.append(f"  {t.linear}: BF16 {t.bf16_s * 1e3:.3f} ms, FP8 {t.fp8_s * 1e3:.3f} ms "
                   f"(GEMMs {t.fp8_gemm_s * 1e3:.3f} + casts {t.cast_s * 1e3:.3f}) per layer, "
                   "forward + backward")
    if p is None:
        return out + ["", f"Undetermined: {report.why_not}"]
    other = report.timing.get("other") or {}
    out += ["", f"Linear layers: {p.linear_speedup:.2f}x  ({p.linear_bf16_s * 1e3:.1f} ms BF16 -> "
                f"{p.linear_fp8_s * 1e3:.1f} ms FP8 per step)",
            f"Rest of the step (not FP8): {p.other_s * 1e3:.1f} ms (attention "
            f"{other.get('attention_s', 0) * 1e3:.1f}, LM head {other.get('head_s', 0) * 1e3:.1f}"
            f" timed; elementwise {other.get('elementwise_s', 0) * 1e3:.1f}, optimizer "
            f"{other.get('optimizer_s', 0) * 1e3:.1f} estimated)",
            f"Predicted step speed-up: {p.step_speedup:.2f}x"
            + (f" (casts unfused, each layer timed alone: {report.unfused.step_speedup:.2f}x)"
               if report.unfused else ""), "", p.verdict]
    out += [f"  note: {n}" for n in p.notes]
    return out


def render_text(report: SpeedupReport) -> str:
    return "\n".join(_lines(report, md=False)) + "\n"


def render_markdown(report: SpeedupReport, chart: str | None = None) -> str:
    lines = _lines(report, md=True)
    if chart:
        lines += ["", f"![FP8 vs BF16 by GEMM shape]({chart})"]
    return "\n".join(lines) + "\n"


def write_chart(report: SpeedupReport, path: str) -> str | None:
    """A bar chart of the GEMM-only speed-up per GEMM; the reason when it cannot be drawn.

    Written like every output (:func:`preflight.outfile.write_atomic`: a temporary file renamed
    into place, never through a symbolic link, never over a file this run read), and the target
    is checked before anything is drawn: ``--chart run.sh`` where the job's ``run.sh`` sources
    ``env.sh`` was refused only for the paths named, so ``--chart env.sh`` replaced the sourced
    script with a PNG (issue 21 item 3, red team). Raises :class:`preflight.outfile.OutputError`
    (exit 2) for such a target, whether or not there is a chart to draw."""
    from preflight.outfile import check_target, write_atomic

    check_target(path, "--chart")
    rows = [r for r in gemm_rows(report) if r.get("speedup")]
    if not rows:
        return "no timed GEMM to plot"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install 'fp8-doctor[plot]')"
    import io

    fig, ax = plt.subplots(figsize=(max(6, len(rows) * 0.55), 3.6))
    try:
        labels = [f"{r['linear']} {r['pass']}\n{r['m']}x{r['k']}x{r['n']}" for r in rows]
        colors = ["#2a9d8f" if r["speedup"] >= 1 else "#e76f51" for r in rows]
        ax.bar(range(len(rows)), [r["speedup"] for r in rows], color=colors)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(rows)), labels, fontsize=6, rotation=60, ha="right")
        ax.set_ylabel("FP8 GEMM speed-up vs BF16")
        ax.set_title("FP8 vs BF16 by GEMM shape (GEMMs only, casts excluded)", fontsize=9)
        fig.tight_layout()
        png = io.BytesIO()
        fig.savefig(png, dpi=120, format="png")
    finally:
        plt.close(fig)
    write_atomic(path, png.getvalue(), flag="--chart")
    return None
