"""How close the host is to limiting the trial's step (issue 26: a speed-up you can trust).

An eager training step is issued by the host (Python, the framework's modules, one launch per
kernel) while the GPU runs the kernels issued before. When the host's issuing time is close to the
GPU's time, the step is GPU-limited in one run and host-limited in the next, as the host's speed
and load vary: the 1B TE eager cell on an H100 (2026-11-28) ran its FP8 step at 179-183 ms in one
call and 195 ms in the next (the GPU then idling 4-55% of a step), so the same job measured 1.048x
and 0.968x, and a trial whose own steps kept the GPU busy (:mod:`.gpubusy` saw nothing) missed
the second by 7% with a +-5% range (docs/gpu-results.md). NVML's busy % only shows the host limit
once it is reached; how near it is must be measured.

The host's issuing time is measured on a *narrow twin* of the model: the same model class, depth,
FP8 backend and recipe, with every width cut (hidden 256, 4 heads of 64, FFN 512, vocabulary
2048, 128 tokens a sequence). It launches the same kernels through the same Python code as the
real model, each taking a few microseconds on the GPU, so its step time is the host's work
(:func:`twin_spec`, timed by the trial child). ``margin = step / twin step`` at the same depth:
above 2, the host has room; near 1, it is about to limit the step. Under :data:`HOST_MARGIN` the
trial states the wider error the host-limited cells were measured with
(:data:`~preflight.speedup.HOST_BOUND_ERROR`) and says why. Compiled trials are not measured: a
compiled step issues fused kernels from generated code, so an eager twin would not be its host
cost, and torch.compile is the remedy the host-limit note gives.

Parent side only imports nothing heavy; :func:`time_twin` runs in the trial child (torch there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, TypeGuard

from preflight.speedup.gpubusy import HOST_BOUND_BUSY, host_bound, median_busy

HOST_MARGIN = 2.0
"""Below this ratio of the step time to the host's issuing time (the narrow twin's step), the
host is close enough to limiting the step that its speed and load move the result by more than
the trial's +-5%. Calibration (H200, 2026-11-28, benchmarks/results/h200-2026-11-28/
trial_margin*.json): the FP8 step of every Llama-3.2-1B eager cell, whose GPU idled in some
steps and whose trial moved 0.96x-1.11x between three runs of one host, had a margin of 1.19-1.64
(TE delayed 1.38, 1.47, 1.54; TE current 1.51; torchao tensorwise 1.19, 1.64); the GPU-limited
Llama-3-8B and Qwen2.5-7B TE cells (8 layers) 3.43-3.69, their BF16 steps 8.5-10.7. 2.0 lies
between, with room on both sides."""

TWIN = {"hidden": 256, "heads": 4, "head_dim": 64, "ffn": 512, "vocab": 2048, "seq": 128}
TWIN_WARMUP, TWIN_STEPS = 3, 8
_MAX_TWIN_BATCH = 8


def twin_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The trial spec with every width cut to :data:`TWIN` (depth, model class, gating, tying and
    the grouped-query layout kept: they decide which kernels a step launches)."""
    heads = int(spec.get("heads") or 1)
    kv = int(spec.get("kv_heads") or heads)
    twin_kv = TWIN["heads"] if kv >= heads else max(1, TWIN["heads"] // 2)
    out = {**spec, "hidden": TWIN["hidden"], "heads": TWIN["heads"], "kv_heads": twin_kv,
           "ffn": TWIN["ffn"], "vocab": TWIN["vocab"], "seq": TWIN["seq"],
           "micro_batch": max(1, min(int(spec.get("micro_batch") or 1), _MAX_TWIN_BATCH))}
    hf = spec.get("hf_config")
    if isinstance(hf, dict):
        cut = {**hf, "hidden_size": TWIN["hidden"], "intermediate_size": TWIN["ffn"],
               "num_attention_heads": TWIN["heads"], "num_key_value_heads": twin_kv,
               "vocab_size": TWIN["vocab"]}
        if "head_dim" in hf:
            cut["head_dim"] = TWIN["head_dim"]
        out["hf_config"] = cut
    return out


def time_twin(run_one: Any, torch: Any, req: dict[str, Any], depth: int,
              precision: str) -> dict[str, Any]:
    """The narrow twin's median step at ``depth`` (child side; ``run_one`` is the trial child's):
    ``{"twin_s": seconds}`` or ``{"twin_error": why}``. Never raises."""
    twin = {**req, "spec": twin_spec(req["spec"]), "compile": False,
            "warmup": TWIN_WARMUP, "steps": TWIN_STEPS}
    try:
        run = run_one(torch, twin, depth, precision)
    except Exception as exc:  # noqa: BLE001 - a diagnostic never fails the trial
        return {"twin_error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return {"twin_s": float(run["median_s"])}


@dataclass(frozen=True)
class Margin:
    """The step time over the host's issuing time, for one precision at its deepest depth."""

    precision: str
    depth: int
    step_s: float
    twin_s: float

    @property
    def ratio(self) -> float:
        return self.step_s / self.twin_s


def _seconds(value: Any) -> TypeGuard[float]:
    return type(value) in (int, float) and math.isfinite(value) and value > 0


def margins(runs: list[dict[str, Any]]) -> list[Margin]:
    """Each precision's margin at the deepest depth whose twin was timed."""
    found: dict[str, Margin] = {}
    for r in runs:
        twin, step = r.get("twin_s"), r.get("median_s")
        if not (_seconds(twin) and _seconds(step)):
            continue
        m = Margin(str(r.get("precision")), int(r.get("depth") or 0), step, twin)
        if m.precision not in found or m.depth > found[m.precision].depth:
            found[m.precision] = m
    return sorted(found.values(), key=lambda m: m.precision)


def tight(runs: list[dict[str, Any]]) -> Margin | None:
    """The tightest margin under :data:`HOST_MARGIN`, or None."""
    low = [m for m in margins(runs) if m.ratio < HOST_MARGIN]
    return min(low, key=lambda m: m.ratio) if low else None


def limited(runs: list[dict[str, Any]]) -> bool:
    """Whether the host limits the FP8 step, or is close enough to that the verdict must allow
    for it (the GPU idled in the FP8 steps, or a margin is under HOST_MARGIN)."""
    return host_bound(runs, "fp8") is not None or tight(runs) is not None


def why(runs: list[dict[str, Any]]) -> str:
    """Whose error the verdict's range is, for :func:`~preflight.speedup.verdict_for`."""
    return ("a host-limited FP8 step's" if host_bound(runs, "fp8") is not None
            else "a host-sensitive step's")


def notes(runs: list[dict[str, Any]], error: float) -> list[str]:
    """What the trial says about the host: the GPU idling in the FP8 steps (:mod:`.gpubusy`), or
    else a margin under HOST_MARGIN; the median margin of each precision either way."""
    out = []
    hb = host_bound(runs, "fp8")
    tail = ("so the FP8 step and this speed-up follow the host's speed and load, and can differ "
            f"by 10% or more on another host or run (the verdict allows +-{error:.0%}); "
            "torch.compile or CUDA graphs take that cost away")
    if hb is not None:
        bf16 = median_busy(runs, "bf16")
        said = (f"the GPU was busy only {hb.median}% of the FP8 step" if hb.median < HOST_BOUND_BUSY
                else f"the GPU idled in {hb.low} of the {hb.sampled} timed FP8 steps (under "
                     f"{HOST_BOUND_BUSY}% busy)")
        out.append(said + f" at {hb.depth} layers"
                   + (f" (the BF16 step: {bf16}% busy)" if bf16 is not None else "")
                   + ": the host limits the FP8 step at least at times (eager FP8 modules issue "
                   "many small kernels), " + tail)
    else:
        m = tight(runs)
        if m is not None:
            out.append(f"the host needs {m.twin_s * 1e3:.0f} ms to issue the {m.precision.upper()}"
                       f" step's kernels at {m.depth} layers (timed on a narrow twin of the "
                       f"model), {m.twin_s / m.step_s:.0%} of the {m.step_s * 1e3:.0f} ms step: a "
                       "slower or busier host at run time makes the step host-limited, " + tail)
    ms = margins(runs)
    if ms:
        out.append("host margin (step time / the host's time to issue it): "
                   + ", ".join(f"{m.precision.upper()} {m.ratio:.2f}x" for m in ms)
                   + f" (under {HOST_MARGIN:.2f}x the host may limit the step)")
    return out
