"""``fp8-doctor speedup`` measured: a short training trial of the job's model, extrapolated.

The model (:mod:`.trial_model`) is trained for real in children (:mod:`.trial_child`) at two
depths, in BF16 and in the job's FP8 backend and recipe, compiled when the job compiles. A
decoder's step time is affine in its depth (the embedding, LM head, loss and their optimizer
share are paid once; every layer adds the same forward, backward and optimizer work), so the
step at the full depth is extrapolated from the two measured depths: ``t(L) = t(d2) + (L - d2) *
(t(d2) - t(d1)) / (d2 - d1)``; peak memory likewise. The output says that it is extrapolated and
from which depths.

Which depths: the deepest pair that fits (:func:`depth_options`): a model of at most 16 layers at
its full depth and half of it (nothing extrapolated), then (4, 8), then (2, 4). The
extrapolation multiplies any error of the measured slope by ``(L - d2) / (d2 - d1)``: 7 for a
16-layer model from (2, 4), 2 from (4, 8). On an H200 (docs/gpu-results.md, 2026-11-27) the
eager BF16 step of Llama-3.2-1B extrapolated from depths 2 and 4 came out 7-9% slow (the FP8
step within 1.5%), enough to turn "will not pay" (1.00x measured) into "should pay" (1.09x).
The child takes the first option whose memory floor fits the GPU, and falls back to the next
one when the deeper pair runs out of memory anyway.

Two children: FP8 first, in the job's backend (it picks the depth pair that fits, FP8 needing
the more memory), then BF16 at the same depths in a fresh process that imports no FP8 backend, as
a BF16 job would (:func:`_both`). When one child trained both, the BF16 step of every Transformer
Engine case came out slow against a BF16 run without TE of the same model and depth: +2.5% to
+8.5% on the H200 and the H100, +5.9% and +6.2% at the full 16 layers of Llama-3.2-1B (H100,
2026-11-27), while its FP8 step was within about 2% and torchao's BF16 step within 0.8-2.5%
(benchmarks/results/*/trial_validate*.json). Whether TE loading its libraries before torch or the
process's earlier runs cost the time was not isolated; the split removes both: with it the
trial's BF16 step came within +0.2% to +0.7% of the real one on two H200 hosts and an H100
(2026-11-27, fifth session).

Bad input is refused here, before a child starts or anything is allocated: every dimension must
be a positive integer within :data:`LIMITS` (a config's hidden size of 1e12, a negative head
count, NaN or a string never reach torch), and the trial's estimated memory
(:func:`need_bytes`) is compared in the child with :data:`MEM_FRACTION` of the GPU's free memory,
which also caps the child's allocator.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from preflight.facts import Unknown
from preflight.speedup import (
    HOST_BOUND_ERROR,
    TRIAL_ERROR,
    ModelShape,
    hostmargin,
    shape_dict,
    trialdoc,
    verdict_for,
)

MEM_FRACTION = 0.8
"""The most of the GPU's free memory a trial may allocate (the child's allocator is capped)."""
TIMEOUT_S = 900.0
WARMUP, STEPS = 5, 12
MAX_TRIAL_DEPTH = 8
FALLBACK_TRIAL_DEPTH = 4
FULL_DEPTH_MAX = 16
"""A model of at most this many layers is trained at its full depth (and half of it) first, where
its memory floor fits: nothing is extrapolated, so no error of the slope is multiplied, at little
cost for such a model (Llama-3.2-1B at depths 8 and 16: 32-36 s on an H100). The 1B's BF16 error
that prompted it turned out not to be the extrapolation's (module doc: the BF16 child)."""
# Bounds on each dimension (inclusive): far above any real model, low enough that nothing
# absurd is ever allocated.
LIMITS: dict[str, int] = {"hidden": 1 << 17, "ffn": 1 << 19, "heads": 1024, "kv_heads": 1024,
                          "layers": 4096, "vocab": 1 << 22, "seq": 1 << 20, "micro_batch": 1 << 16,
                          "tokens": 1 << 21, "tp": 1024, "head_dim": 1024}


def absurd(shape: ModelShape, *, whole: bool = True) -> str | None:
    """Why no child may be started for these shapes (a dimension that is no positive integer
    within :data:`LIMITS`, more heads than hidden units), or None; ``whole``: the trial builds
    the whole model, so layers and vocab must be known (``--quick`` times one layer's GEMMs)."""
    values = {k: getattr(shape, k) for k in ("hidden", "ffn", "heads", "kv_heads", "layers",
                                             "vocab", "seq", "micro_batch", "tp")}
    for key, value in values.items():
        if value is None and key in ("layers", "vocab"):
            if not whole:
                continue
            return (f"the model's {key} is unknown: the trial builds the whole model (pass "
                    "--model-config path/to/config.json)")
        if not isinstance(value, int) or isinstance(value, bool):
            return f"{key} is {value!r}, not an integer"
        if not 0 < value <= LIMITS[key]:
            return f"{key} = {value} is outside 1..{LIMITS[key]}"
    tokens = shape.seq * shape.micro_batch
    if tokens > LIMITS["tokens"]:
        return f"micro-batch x seq = {tokens} tokens is over {LIMITS['tokens']}"
    if shape.heads > shape.hidden or shape.tp > shape.heads:
        return f"{shape.heads} heads over hidden {shape.hidden} split {shape.tp} ways"
    hd = (shape.hf_config or {}).get("head_dim")
    if hd is not None and (not isinstance(hd, int) or isinstance(hd, bool) or
                           not 0 < hd <= LIMITS["head_dim"]):
        # transformers' Llama / Qwen3 / Gemma size q/k/v/o from it, not hidden / heads
        return f"the config's head_dim {str(hd)[:40]} is outside 1..{LIMITS['head_dim']}"
    return None


def refuse(shape: ModelShape) -> str | None:
    """Why the trial will not run these shapes (absurd or inconsistent), or None."""
    why = absurd(shape)
    if why:
        return why
    if shape.hidden % shape.heads:
        return f"hidden {shape.hidden} is not divisible by the {shape.heads} heads"
    if shape.heads % shape.kv_heads:
        return f"{shape.heads} heads are not divisible by the {shape.kv_heads} KV heads"
    if shape.tp != 1:
        return (f"tensor parallel {shape.tp}: the trial trains one rank's whole model; "
                "use --quick for the per-rank estimate")
    return None


def depths_for(layers: int, most: int = MAX_TRIAL_DEPTH) -> tuple[int, ...]:
    """The two depths trained: (d, 2d) with 2d = min(layers, most); the depth itself when <= 2."""
    if layers <= 2:
        return (layers,)
    top = min(layers, most)
    return (max(1, top // 2), top)


def depth_options(layers: int) -> tuple[tuple[int, ...], ...]:
    """The depth pairs to try, deepest first: the full depth and half of it for a model of at
    most :data:`FULL_DEPTH_MAX` layers, then (4, 8), then (2, 4), each where the one before does
    not fit."""
    tops = (layers if layers <= FULL_DEPTH_MAX else MAX_TRIAL_DEPTH, MAX_TRIAL_DEPTH,
            FALLBACK_TRIAL_DEPTH)
    return tuple(dict.fromkeys(depths_for(layers, top) for top in tops))


def params_at(shape: ModelShape, depth: int) -> int:
    hd = (shape.hf_config or {}).get("head_dim")
    hd = hd if isinstance(hd, int) and hd > 0 else shape.hidden // shape.heads
    q, kv = hd * shape.heads, hd * shape.kv_heads
    per_layer = (shape.hidden * (q + 2 * kv) + q * shape.hidden +
                 shape.hidden * shape.ffn * (3 if shape.gated else 2))
    return (shape.vocab or 0) * shape.hidden * (1 if shape.tied else 2) + depth * per_layer


def need_bytes(shape: ModelShape, depth: int) -> int:
    """A floor on the trial's memory at ``depth``: BF16 parameters, gradients and two AdamW
    moments (8 bytes a parameter), the activations a layer keeps for backward (~10 x hidden +
    4 x ffn BF16 values a token) and the logits with their float32 loss copy and gradient."""
    tokens = shape.seq * shape.micro_batch
    act = tokens * depth * (10 * shape.hidden + 4 * shape.ffn) * 2
    logits = tokens * (shape.vocab or 0) * 10
    return params_at(shape, depth) * 8 + act + logits


@dataclass(frozen=True)
class Side:
    """One precision at the full depth (extrapolated) and as measured at each depth."""

    step_s: float
    tokens_per_s: float
    peak_bytes: int | None
    measured: dict[int, float]            # depth -> median step seconds
    measured_peak: dict[int, int | None]


@dataclass(frozen=True)
class TrialReport:
    shape: ModelShape | None
    backend: str
    recipe: str
    compiled: bool
    depths: tuple[int, ...] = ()
    bf16: Side | None = None
    fp8: Side | None = None
    speedup: float | None = None
    verdict: str = ""
    why_not: str = ""
    notes: tuple[str, ...] = ()
    child: dict[str, Any] = field(default_factory=dict)
    error: float = TRIAL_ERROR      # how far the speed-up may be from real training (verdict)

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {"schema_version": "1.0", "mode": "trial",
                "shape": shape_dict(self.shape) if self.shape else None,
                "backend": self.backend, "recipe": self.recipe, "compiled": self.compiled,
                "depths": list(self.depths),
                "bf16": asdict(self.bf16) if self.bf16 else None,
                "fp8": asdict(self.fp8) if self.fp8 else None,
                "step_speedup": self.speedup, "error": self.error,
                "verdict": self.verdict or None,
                "why_not": self.why_not or None, "notes": list(self.notes),
                "device_name": self.child.get("device_name"), "torch": self.child.get("torch"),
                "runs": self.child.get("runs", [])}


def extrapolate(points: Mapping[int, float], depth: int) -> float:
    """The value at ``depth`` on the line through the shallowest and deepest points."""
    ds = sorted(points)
    if depth in points or len(ds) == 1:
        return points.get(depth, points[ds[-1]])
    d1, d2 = ds[0], ds[-1]
    slope = (points[d2] - points[d1]) / (d2 - d1)
    return points[d2] + (depth - d2) * slope


def _side(runs: list[dict[str, Any]], precision: str, shape: ModelShape) -> Side:
    mine = [r for r in runs if r["precision"] == precision]
    times = {int(r["depth"]): float(r["median_s"]) for r in mine}
    peaks = {int(r["depth"]): r.get("peak_bytes") for r in mine}
    layers = shape.layers or max(times)
    step = extrapolate(times, layers)
    known = {d: float(p) for d, p in peaks.items() if isinstance(p, (int, float))}
    peak = int(extrapolate(known, layers)) if len(known) == len(peaks) and known else None
    return Side(step, shape.seq * shape.micro_batch / step if step > 0 else 0.0, peak,
                times, peaks)


def _notes(shape: ModelShape, depths: tuple[int, ...], bf16: Side, fp8: Side,
           result: Mapping[str, Any]) -> tuple[str, ...]:
    notes = []
    if shape.layers and shape.layers in depths and len(depths) > 1:
        notes.append(f"trained at its full depth ({shape.layers} layers): nothing extrapolated")
    if shape.layers and shape.layers not in depths:
        notes.append(f"extrapolated to {shape.layers} layers from real training steps at "
                     f"depths {' and '.join(map(str, depths))} (step time and peak memory are "
                     "affine in depth)")
    models = {r.get("model") for r in result.get("runs", [])}
    notes += [f"model: {m}, random weights" for m in sorted(m for m in models if m)]
    if bf16.peak_bytes and fp8.peak_bytes:
        extra = fp8.peak_bytes - bf16.peak_bytes
        if extra > 0.02 * bf16.peak_bytes:
            notes.append(f"FP8 needs more memory than BF16 here: peak {fp8.peak_bytes / 2**30:.1f}"
                         f" GiB vs {bf16.peak_bytes / 2**30:.1f} GiB (+{extra / 2**30:.1f} GiB, "
                         f"{100 * extra / bf16.peak_bytes:+.0f}%)")
    return tuple(notes)


def trial(shape: ModelShape | Unknown, *, backend: str, recipe: str, compiled: bool,
          device: str = "cuda", timeout: float = TIMEOUT_S, warmup: int = WARMUP,
          steps: int = STEPS, depths: tuple[int, ...] | None = None,
          mem_fraction: float = MEM_FRACTION, host_twin: bool | None = None) -> TrialReport:
    """Run the trial (in a child) and extrapolate; never raises for a bad shape or a failure.
    ``host_twin``: time the host's share of each step (:mod:`.hostmargin`; by default on a GPU
    and for an eager job only)."""
    base: dict[str, Any] = {"backend": backend, "recipe": recipe, "compiled": compiled}
    if isinstance(shape, Unknown):
        return TrialReport(None, why_not=shape.reason, **base)
    why = refuse(shape)
    if why:
        return TrialReport(shape, why_not=f"refused before anything was allocated: {why}", **base)
    if backend == "te" and not device.startswith("cuda"):
        return TrialReport(shape, why_not="Transformer Engine has no CPU path", **base)
    assert shape.layers is not None   # refuse() said so
    options = (depths,) if depths else depth_options(shape.layers)
    if not device.startswith("cuda"):
        # the GPU child caps its allocator; on the CPU nothing did (redteam5: a shape inside
        # LIMITS asked for 2 TB, and one a little over the free memory is paged in until the
        # OOM killer picks a process): the pairs whose floor fits the free memory, or none
        free = free_memory()
        least = min(need_bytes(shape, max(o)) for o in options)
        options = tuple(o for o in options if need_bytes(shape, max(o)) <= mem_fraction * free)
        if not options:
            return TrialReport(shape, why_not=(
                f"refused before anything was allocated: the trial needs about "
                f"{least / 2**30:.1f} GiB, more than {mem_fraction:.0%} of the "
                f"{free / 2**30:.1f} GiB of memory free here"), **base)
    chosen = options[-1]
    spec = {**shape_dict(shape), "hf_config": shape.hf_config}
    request = {"device": device, "backend": backend, "recipe": recipe, "compile": compiled,
               "depth_options": [{"depths": list(o), "need_bytes": need_bytes(shape, max(o))}
                                 for o in options],
               "warmup": warmup, "steps": steps, "spec": spec, "mem_fraction": mem_fraction,
               "host_twin": (device.startswith("cuda") and not compiled
                             if host_twin is None else host_twin)}
    result = _both(request, timeout)
    chosen = trialdoc.depths(result.get("depths")) or chosen
    if result.get("status") != "ok":
        return TrialReport(shape, depths=chosen, child=result,
                           why_not=f"no trial: {str(result.get('reason') or 'the child failed')}",
                           **base)
    unusable = trialdoc.problem(result)
    if unusable:
        return TrialReport(shape, depths=chosen, child=result,
                           why_not=f"no trial: the trial child's result is not usable: {unusable}",
                           **base)
    bf16, fp8 = _side(result["runs"], "bf16", shape), _side(result["runs"], "fp8", shape)
    notes = _notes(shape, chosen, bf16, fp8, result)
    if not device.startswith("cuda"):
        notes += ("on the CPU, FP8 is emulated by torchao: these numbers exercise the trial, they "
                  "say nothing about FP8's speed",)
    bound = hostmargin.limited(result.get("runs", []))
    error = HOST_BOUND_ERROR if bound else TRIAL_ERROR
    notes += tuple(hostmargin.notes(result.get("runs", []), error))   # inconclusive too
    odd = [name for name, side in (("BF16", bf16), ("FP8", fp8))
           if len(side.measured) > 1 and side.measured[max(side.measured)]
           <= side.measured[min(side.measured)]]
    if odd:
        return TrialReport(shape, depths=chosen, bf16=bf16, fp8=fp8, notes=notes, child=result,
                           why_not=f"inconclusive: the {' and '.join(odd)} step did not grow "
                                   "with depth (timing noise: is the machine busy with other work?)",
                           **base)
    if not (bf16.step_s > 0 and fp8.step_s > 0):
        return TrialReport(shape, depths=chosen, bf16=bf16, fp8=fp8, notes=notes, child=result,
                           why_not=f"inconclusive: extrapolated to {shape.layers} layers the "
                                   "step time is not positive (timing noise?)", **base)
    ratio = bf16.step_s / fp8.step_s
    line = verdict_for(ratio, error=error,
                       why=hostmargin.why(result.get("runs", [])) if bound else "the trial's")
    return TrialReport(shape, depths=chosen, bf16=bf16, fp8=fp8, speedup=round(ratio, 3),
                       verdict=line, notes=notes, child=result, error=error, **base)


def _both(request: dict[str, Any], timeout: float) -> dict[str, Any]:
    """FP8 in one child, then BF16 in a fresh one at the depths FP8 trained (module doc); one
    result document, BF16's runs first. ``timeout`` bounds the two together."""
    t0 = time.monotonic()
    fp8 = _run_child({**request, "precisions": ["fp8"]}, timeout)
    if fp8.get("status") != "ok":
        return fp8
    depths = list(fp8.get("depths") or [])
    need = next((o.get("need_bytes") for o in request["depth_options"]
                 if o.get("depths") == depths), None)
    left = max(1.0, timeout - (time.monotonic() - t0))
    bf16 = _run_child({**request, "precisions": ["bf16"],
                       "depth_options": [{"depths": depths, "need_bytes": need}]}, left)
    children = {"fp8": _child_facts(fp8), "bf16": _child_facts(bf16)}
    if bf16.get("status") != "ok":
        return {**bf16, "depths": depths, "children": children}
    return {**fp8, "runs": list(bf16.get("runs") or []) + list(fp8.get("runs") or []),
            "seconds": round(float(fp8.get("seconds") or 0) + float(bf16.get("seconds") or 0), 2),
            "children": children}


def _child_facts(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: doc.get(k) for k in ("status", "seconds", "backend_loaded")}


def free_memory() -> int:
    """Bytes of physical memory free now (``MemAvailable``; free pages where /proc has none)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return 0


def _run_child(request: dict[str, Any], timeout: float) -> dict[str, Any]:
    """The child's result document, or a failure document saying why there is none."""
    from preflight.base import isolate, proc

    workdir = tempfile.mkdtemp(prefix="fp8-doctor-trial-")
    path = os.path.join(workdir, "request.json")
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(request, fh)
        # isolate: nothing from the job or the cwd importable there (issue 21 item 1)
        res = proc.run(isolate.python_argv("-m", "preflight.speedup.trial_child", path), timeout,
                       env=isolate.python_env())
    finally:
        for name in (path, workdir):
            try:
                (os.rmdir if name == workdir else os.unlink)(name)
            except OSError:
                pass
    last = res.stdout.strip().splitlines()[-1:] if res.stdout.strip() else []
    try:
        doc = json.loads(last[0]) if last else None
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        return doc
    why = ("timed out after %g s" % timeout if res.timed_out else
           f"the trial child ended with {res.returncode}: "
           f"{proc.error_line(res.stderr, 300) or res.error or 'no output'}")
    return {"status": "failed", "reason": why}
