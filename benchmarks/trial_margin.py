"""GPU: the trial's host margin (preflight/speedup/hostmargin.py) over several cases, trial only.

    python benchmarks/trial_margin.py --out DIR CASE [CASE ...] [--repeat N]

A CASE is SHAPE:BACKEND:RECIPE[:eager|compile] as in trial_validate.py (its shapes). For each,
``fp8-doctor speedup``'s trial runs as shipped (its own children, the narrow twin timed on a GPU for
an eager job) and this records the speed-up, the error the verdict allowed, each precision's margin
(step / twin step at the deepest depth), the twin and step times, the GPU-busy medians and the
verdict. What it is for: whether the margin separates the cells whose real speed-up moves with the
host (the 1B TE eager cell) from those the GPU limits (the 7-8B cells), to calibrate
``HOST_MARGIN``. Writes DIR/trial_margin.json with the versions, the device and the date.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from trial_validate import parse_case, shape_of, versions  # noqa: E402

from preflight.speedup import gpubusy, hostmargin  # noqa: E402
from preflight.speedup.trial import trial  # noqa: E402


def one(case: str, device: str) -> dict[str, Any]:
    name, backend, recipe, compiled = parse_case(case)
    t0 = time.perf_counter()
    rep = trial(shape_of(name), backend=backend, recipe=recipe, compiled=compiled, device=device)
    runs = rep.child.get("runs") or []
    return {"case": case, "wall_s": round(time.perf_counter() - t0, 1), "speedup": rep.speedup,
            "error": rep.error, "verdict": rep.verdict, "why_not": rep.why_not or None,
            "margins": {m.precision: {"depth": m.depth, "step_s": round(m.step_s, 5),
                                      "twin_s": round(m.twin_s, 5), "ratio": round(m.ratio, 3)}
                        for m in hostmargin.margins(runs)},
            "twin_errors": [r["twin_error"] for r in runs if r.get("twin_error")],
            "busy_median": {p: gpubusy.median_busy(runs, p) for p in ("bf16", "fp8")},
            "host_bound": gpubusy.host_bound(runs, "fp8") is not None,
            "notes": list(rep.notes), "runs": runs}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           "versions": versions(), "host_margin": hostmargin.HOST_MARGIN,
                           "cases": []}
    for _ in range(args.repeat):
        for case in args.cases:
            c = one(case, args.device)
            doc["cases"].append(c)
            (out / "trial_margin.json").write_text(json.dumps(doc, indent=1, default=str))
            print(f"{case}: {c['speedup']} +-{c['error']} margins "
                  f"{ {p: m['ratio'] for p, m in c['margins'].items()} } busy {c['busy_median']} "
                  f"bound {c['host_bound']} {c['twin_errors'][:1]} {c['wall_s']} s "
                  f"{c['why_not'] or ''}", flush=True)


if __name__ == "__main__":
    main()
