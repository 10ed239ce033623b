"""``fp8-doctor speedup``: shapes from the job, GPU timing in a child, the prediction.

The child (:mod:`.child`) imports torch, so it never runs in this process; it is bounded in
time and output like every other child (:mod:`preflight.base.proc`). Without a GPU the GEMM
list is still shown and the prediction is undetermined, with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from preflight.facts import Unknown
from preflight.speedup import (
    ModelShape,
    Prediction,
    Timing,
    gemm_table,
    linears,
    predict,
    shape_dict,
)

TIMEOUT_S = 300.0
QUICK_ERROR = ("a modelled estimate (--quick), not a measurement: against real compiled training "
               "of an 8-layer Llama-3-8B (H200, 2026-11-27) it said 1.32x where 1.20x was "
               "measured with torchao tensorwise (+10%) and 1.30x where 1.06x was measured with "
               "rowwise (+23%); for TE it was -15% (H100, 2026-11-24). `fp8-doctor speedup` "
               "without --quick trains the model instead (docs/gpu-results.md)")
"""How far the modelled estimate was from real training, said in its output (issue 26)."""


@dataclass(frozen=True)
class SpeedupReport:
    shape: ModelShape | None
    gemms: list[dict[str, Any]]
    prediction: Prediction | None
    timing: dict[str, Any]                # the child's raw result (device, per-GEMM times)
    unfused: Prediction | None = None     # each linear timed whole, alone (an upper bound)
    why_not: str = ""                     # set when no prediction could be made
    backend: str = "torchao"
    recipe: str = "tensorwise"

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": "1.0",
                "shape": shape_dict(self.shape) if self.shape else None,
                "backend": self.backend, "recipe": self.recipe,
                "gemms": self.gemms, "timing": self.timing,
                "prediction": asdict(self.prediction) if self.prediction else None,
                "prediction_unfused": asdict(self.unfused) if self.unfused else None,
                "why_not": self.why_not or None}


def backend_of(facts: Mapping[str, Any]) -> tuple[str, str]:
    """The job's FP8 backend and recipe (intent.*), torchao tensorwise when unsaid."""
    backend = facts.get("intent.backend")
    recipe = facts.get("intent.recipe")
    b = backend if backend in ("te", "torchao") else "torchao"
    r = recipe if isinstance(recipe, str) and not isinstance(recipe, Unknown) else (
        "delayed" if b == "te" else "tensorwise")
    return b, r


def timings_from(result: Mapping[str, Any], *, whole: bool = False) -> list[Timing]:
    """Per-linear timings: the timed GEMMs plus the modelled (fused) casts; with ``whole``, the
    layer timed whole as the backend runs it alone (None when not measured)."""
    out = []
    for lin in result.get("linears") or []:
        bf16 = sum(lin["bf16"].values())
        gemm8 = sum(lin["fp8"].values())
        if whole:
            w = lin.get("whole")
            if not w:
                return []
            out.append(Timing(lin["name"], w["bf16_s"], w["fp8_s"], gemm8,
                              max(0.0, w["fp8_s"] - gemm8)))
            continue
        cast = float(lin.get("cast_model_s") or 0.0)
        out.append(Timing(lin["name"], bf16, gemm8 + cast, gemm8, cast))
    return out


def other_seconds(other: Mapping[str, Any]) -> float:
    return float(sum(other.get(k, 0.0) for k in ("attention_s", "elementwise_s", "head_s",
                                                  "optimizer_s")))


def speedup(facts: Mapping[str, Any], shape: ModelShape | Unknown, *, device: str = "cuda",
            backend: str | None = None, recipe: str | None = None,
            timeout: float = TIMEOUT_S, measure_layers: bool = False) -> SpeedupReport:
    from preflight.base import isolate, proc

    b, r = backend_of(facts)
    b, r = backend or b, recipe or r
    if isinstance(shape, Unknown):
        return SpeedupReport(None, [], None, {}, why_not=shape.reason, backend=b, recipe=r)
    from preflight.speedup.trial import absurd

    if (why := absurd(shape, whole=False)) is not None:
        # the child sizes torch.randn(tokens, d_in) from these (redteam5: hidden 1e12 reached it)
        return SpeedupReport(shape, [], None, {}, backend=b, recipe=r,
                             why_not=f"refused before anything was allocated: {why}")
    gemms = gemm_table(shape)
    request = {"device": device, "backend": b, "recipe": r, "shape": shape_dict(shape),
               "measure_layers": measure_layers,
               "linears": [{"name": lin.name, "d_in": lin.d_in, "d_out": lin.d_out}
                           for lin in linears(shape)]}
    res = proc.run(isolate.python_argv("-m", "preflight.speedup.child", json.dumps(request)),
                   timeout, env=isolate.python_env())
    last = res.stdout.strip().splitlines()[-1:] if res.stdout.strip() else []
    try:
        result = json.loads(last[0]) if last else {}
    except ValueError:
        result = {}
    if not isinstance(result, dict) or result.get("status") != "ok":
        why = (result.get("reason") if isinstance(result, dict) and result.get("reason") else
               "timed out" if res.timed_out else
               f"timing child ended with {res.returncode}: "
               f"{proc.error_line(res.stderr, 300) or res.error or 'no output'}")
        return SpeedupReport(shape, gemms, None, result if isinstance(result, dict) else {},
                             why_not=f"no timing: {why}", backend=b, recipe=r)
    notes = (QUICK_ERROR,) + tuple(n for n in shape.source if "unknown" in n)
    if result.get("note"):
        notes += (str(result["note"]),)
    if result.get("backend") == "te":
        notes += ("the TE path is less certain: on an H100 it predicted 0.98x where a real eager "
                  "training run measured 1.15x (-15%, docs/gpu-results.md)",)
    else:
        notes += ("FP8 casts (amax, cast, transposed copy of X, W and dY) modelled as the bytes "
                  "they move at the measured copy bandwidth, as a compiled model fuses them",)
    notes += ("attention and the LM head timed in BF16 (they stay BF16); norms, activations, "
              "residuals, loss and optimizer estimated from the measured copy bandwidth",)
    other = other_seconds(result["other"])
    prediction = predict(shape, timings_from(result), other, notes)
    whole = timings_from(result, whole=True)
    unfused = predict(shape, whole, other, ("each linear timed whole and alone: its casts fused "
                                            "with nothing else",)) if whole else None
    return SpeedupReport(shape, gemms, prediction, result, unfused, backend=b, recipe=r)
