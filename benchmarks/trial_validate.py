"""GPU: `fp8-doctor speedup` (the trial, and the modelled --quick estimate) against real training.

    python benchmarks/trial_validate.py --out DIR CASE [CASE ...] [--quick] [--steps 15]

A CASE is SHAPE:BACKEND:RECIPE[:eager|compile], e.g. ``llama3-8b-8l:torchao:tensorwise:compile``
or ``qwen2.5-7b-8l:te:delayed:eager``. For each case:

1. the trial, exactly as ``fp8-doctor speedup`` runs it (``preflight.speedup.trial.trial``: its
   own child, two small depths, extrapolated to the shape's depth);
2. the real run: the same model at its full depth, trained in a fresh process by this script's
   own loop, written the way such a job is (transformers ``AutoModelForCausalLM.from_config``
   with random weights; torchao ``convert_to_float8_training`` with the LM head left out, or
   accelerate's own ``convert_model`` and ``fp8_autocast`` around the forward for TE; fused AdamW;
   ``torch.compile`` of the whole model when the case compiles); the median of ``--steps`` steps
   after ``--warmup`` warm-up steps, BF16 and FP8, each step timed between two synchronisations;
3. with ``--quick``, the modelled estimate (``preflight.speedup.run.speedup``).

The BF16 real run is shared by the cases of one shape and mode (``--interleave``: each case runs its
own BF16 and FP8 real runs in ABBA order). Each real step also records the GPU's SM clock, power,
temperature and clock-event reasons (NVML, read only), and a thread samples them every 0.25 s for
the whole run (``timeline``, with ``marks`` saying which phase ran when). Writes DIR/trial_validate.json
(every number, the versions, the device, the date) and prints a table. The blind case of issue
26 is ``llama3-8b-8l:torchao:tensorwise:compile`` (HF LlamaForCausalLM, Llama-3-8B shapes cut to
8 layers, micro-batch 2 x 4096).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from preflight.speedup import ModelShape, gpubusy, hostmargin, verdict_for  # noqa: E402

LLAMA = {"model_type": "llama", "hidden_act": "silu", "rope_theta": 500000.0,
         "rms_norm_eps": 1e-5}
# (HF config, seq, micro-batch); the values are each model's config.json on the Hugging Face Hub.
SHAPES: dict[str, tuple[dict[str, Any], int, int]] = {
    "llama3-8b-8l": ({**LLAMA, "hidden_size": 4096, "intermediate_size": 14336,
                      "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 8,
                      "vocab_size": 128256, "tie_word_embeddings": False}, 4096, 2),
    "qwen2.5-7b-8l": ({"model_type": "qwen2", "hidden_act": "silu", "rope_theta": 1000000.0,
                       "rms_norm_eps": 1e-6, "hidden_size": 3584, "intermediate_size": 18944,
                       "num_attention_heads": 28, "num_key_value_heads": 4,
                       "num_hidden_layers": 8, "vocab_size": 152064,
                       "tie_word_embeddings": False}, 4096, 2),
    "llama3.2-1b": ({**LLAMA, "hidden_size": 2048, "intermediate_size": 8192,
                     "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 16,
                     "vocab_size": 128256, "tie_word_embeddings": True}, 4096, 2),
    # CPU smoke test of this script only
    "tiny": ({**LLAMA, "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 4, "vocab_size": 256,
              "tie_word_embeddings": False}, 32, 2),
}


def shape_of(name: str) -> ModelShape:
    hf, seq, mb = SHAPES[name]
    return ModelShape(hidden=hf["hidden_size"], ffn=hf["intermediate_size"],
                      heads=hf["num_attention_heads"], kv_heads=hf["num_key_value_heads"],
                      layers=hf["num_hidden_layers"], vocab=hf["vocab_size"], seq=seq,
                      micro_batch=mb, tied=hf["tie_word_embeddings"],
                      model_type=hf["model_type"], hf_config=dict(hf),
                      source=(f"benchmark shape {name}",))


# ----------------------------------------------------------------------------- the real run
class GpuSampler:
    """NVML readings after each timed step (read only; never a setting): the SM clock (MHz),
    power (W), temperature (C), the active clock-event reasons bitmask and the share of the last
    sample period a kernel ran (%), so that a slow step can be told apart as the GPU slowing down
    (power / thermal) or the GPU waiting for the host. Empty without NVML."""

    def __init__(self, device: str, torch: Any = None) -> None:
        self.samples: list[list[float]] = []
        # the trial's own lookup (speedup/gpubusy.py): by UUID where torch is imported
        self._nv, self._h = (gpubusy.nvml_handle(torch, device) if device.startswith("cuda")
                             else (None, None))

    def sample(self) -> None:
        if self._nv is None:
            return
        nv, h = self._nv, self._h
        try:
            self.samples.append([
                nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
                round(nv.nvmlDeviceGetPowerUsage(h) / 1000, 1),
                nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
                (getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
                 or nv.nvmlDeviceGetCurrentClocksThrottleReasons)(h),
                nv.nvmlDeviceGetUtilizationRates(h).gpu])
        except Exception:  # noqa: BLE001
            self._nv = None


def real_run(name: str, backend: str, recipe: str, compiled: bool, fp8: bool, device: str,
             warmup: int, steps: int) -> dict[str, Any]:
    """One full-depth training run in this process (a fresh one per run)."""
    if fp8 and backend == "te":
        import transformer_engine.pytorch as te  # before torch loads its cuDNN
    import contextlib

    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    hf, seq, mb = SHAPES[name]
    cfg = {k: v for k, v in hf.items() if k != "model_type"}
    config = AutoConfig.for_model(hf["model_type"], **cfg, use_cache=False)
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16,
                                                 attn_implementation="sdpa")
    ctx: Any = contextlib.nullcontext
    if fp8 and backend == "torchao":
        from torchao.float8 import Float8LinearConfig, convert_to_float8_training

        conf = (Float8LinearConfig.from_recipe_name(recipe) if recipe != "tensorwise"
                else Float8LinearConfig())
        if device == "cpu":
            import dataclasses
            conf = dataclasses.replace(conf, emulate=True)
        convert_to_float8_training(model, config=conf,
                                   module_filter_fn=lambda m, fqn: fqn != "lm_head")
    elif fp8 and backend == "te":
        from accelerate import Accelerator
        from accelerate.utils.transformer_engine import convert_model

        # convert_model gathers parameters through accelerate's state, which must exist: the
        # H200 run of 2026-11-27 failed here ("Please make sure to properly initialize your
        # accelerator via `accelerator = Accelerator()`"). Not re-run since (no device time).
        Accelerator()
        from transformer_engine.common import recipe as te_recipe

        with torch.no_grad():
            convert_model(model)
        rec = (te_recipe.Float8CurrentScaling() if recipe == "current" else
               te_recipe.DelayedScaling())
        ctx = lambda: te.fp8_autocast(enabled=True, fp8_recipe=rec)  # noqa: E731
    if compiled:
        model = torch.compile(model)
    on_cuda = device.startswith("cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5,
                            **({"fused": True} if on_cuda else {}))
    ids = torch.randint(0, hf["vocab_size"], (mb, seq), device=device)

    def sync() -> None:
        if on_cuda:
            torch.cuda.synchronize()
    times = []
    gpu = GpuSampler(device, torch)   # per step: SM clock, power, temperature, reasons, busy
    t_start = time.perf_counter()
    for i in range(warmup + steps):
        sync()
        t0 = time.perf_counter()
        with ctx():
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
            gpu.sample()
    ordered = sorted(times)
    return {"median_s": ordered[len(ordered) // 2], "min_s": ordered[0], "max_s": ordered[-1],
            "times_s": [round(t, 6) for t in times], "gpu": gpu.samples,
            "peak_bytes": torch.cuda.max_memory_allocated() if on_cuda else None,
            "wall_s": round(time.perf_counter() - t_start, 1), "loss": float(loss)}


def real_in_child(name: str, backend: str, recipe: str, compiled: bool, fp8: bool,
                  args: argparse.Namespace) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--real", name, backend, recipe,
            "compile" if compiled else "eager", "fp8" if fp8 else "bf16", "--device", args.device,
            "--warmup", str(args.warmup), "--steps", str(args.steps), "--out", args.out]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    lines = proc.stdout.strip().splitlines()
    try:
        return dict(json.loads(lines[-1]))
    except (IndexError, ValueError):
        return {"error": (proc.stderr or proc.stdout)[-1500:], "rc": proc.returncode}


def _repeated(name: str, backend: str, recipe: str, compiled: bool, fp8: bool,
              args: argparse.Namespace) -> dict[str, Any]:
    """``--repeat-real`` fresh real runs; the median of their medians (each run kept), so that one
    process's luck does not decide the measured speed-up (the 1B TE delayed cell's real FP8 step
    was 158 ms in one session and 189 ms in the next, 2026-11-27)."""
    return _combine([real_in_child(name, backend, recipe, compiled, fp8, args)
                     for _ in range(max(1, args.repeat_real))])


def _combine(runs: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in runs if "median_s" in r]
    if len(runs) == 1 or not ok:
        return runs[0]
    meds = sorted(r["median_s"] for r in ok)
    return {"median_s": meds[len(meds) // 2], "min_s": min(r["min_s"] for r in ok),
            "max_s": max(r["max_s"] for r in ok), "run_medians_s": meds,
            "peak_bytes": ok[0].get("peak_bytes"), "runs": runs}


def _interleaved(name: str, backend: str, recipe: str, compiled: bool,
                 args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """``--repeat-real`` BF16 and FP8 runs each, in ABBA order (bf16 fp8 fp8 bf16 ...)."""
    got: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    for i in range(max(1, args.repeat_real)):
        for fp8 in ((False, True) if i % 2 == 0 else (True, False)):
            got[fp8].append(real_in_child(name, backend, recipe, compiled, fp8, args))
    return _combine(got[False]), _combine(got[True])


# ----------------------------------------------------------------------------- the timeline
MARKS: list[list[Any]] = []
_T0 = time.monotonic()


def _now() -> float:
    return round(time.monotonic() - _T0, 2)


def _timeline(device: str, into: list[list[Any]], stop: threading.Event) -> None:
    """Every 0.25 s for the whole run: [seconds, SM MHz, W, C, clock-event reasons, busy %]."""
    gpu = GpuSampler(device)
    while not stop.wait(0.25):
        gpu.sample()
        if gpu.samples:
            into.append([_now(), *gpu.samples.pop()])


# ----------------------------------------------------------------------------- the cases
def parse_case(case: str) -> tuple[str, str, str, bool]:
    """SHAPE:BACKEND:RECIPE[:eager|compile] -> (shape, backend, recipe, compiled)."""
    parts = case.split(":")
    name, backend, recipe = parts[:3]
    return name, backend, recipe, (parts[3] if len(parts) > 3 else "compile") == "compile"


def run_case(case: str, args: argparse.Namespace, bf16_cache: dict[str, Any]) -> dict[str, Any]:
    from preflight.speedup.trial import trial

    name, backend, recipe, compiled = parse_case(case)
    shape = shape_of(name)
    out: dict[str, Any] = {"case": case, "shape": name, "backend": backend, "recipe": recipe,
                           "compiled": compiled, "layers": shape.layers}
    t0 = time.perf_counter()
    MARKS.append([_now(), f"{case}: trial"])
    rep = trial(shape, backend=backend, recipe=recipe, compiled=compiled, device=args.device)
    out["trial_wall_s"] = round(time.perf_counter() - t0, 1)
    out["trial"] = rep.to_dict()
    out["trial_speedup"] = rep.speedup
    out["host_margins"] = {m.precision: round(m.ratio, 3)
                           for m in hostmargin.margins(out["trial"].get("runs") or [])}
    key = f"{name}:{'compile' if compiled else 'eager'}"
    MARKS.append([_now(), f"{case}: real runs"])
    if args.interleave:   # BF16 and FP8 in ABBA order: a GPU warming up over the runs hits both
        real16, real8 = _interleaved(name, backend, recipe, compiled, args)
    else:
        if key not in bf16_cache:
            bf16_cache[key] = _repeated(name, backend, recipe, compiled, False, args)
        real16 = bf16_cache[key]
        real8 = _repeated(name, backend, recipe, compiled, True, args)
    MARKS.append([_now(), f"{case}: done"])
    out["real_bf16"], out["real_fp8"] = real16, real8
    if "median_s" in real16 and "median_s" in real8:
        measured = real16["median_s"] / real8["median_s"]
        out["measured_speedup"] = round(measured, 4)
        out["measured_verdict"] = verdict_for(measured)
        if rep.speedup:
            out["trial_error_pct"] = round(100 * (rep.speedup - measured) / measured, 2)
            out["verdict_agrees"] = _agrees(rep.speedup, measured, rep.error)
            if rep.bf16 and rep.fp8:
                out["trial_bf16_step_error_pct"] = round(
                    100 * (rep.bf16.step_s - real16["median_s"]) / real16["median_s"], 2)
                out["trial_fp8_step_error_pct"] = round(
                    100 * (rep.fp8.step_s - real8["median_s"]) / real8["median_s"], 2)
    if args.quick:
        from preflight.speedup.run import speedup

        t0 = time.perf_counter()
        q = speedup({}, shape, backend=backend, recipe=recipe)
        out["quick_wall_s"] = round(time.perf_counter() - t0, 1)
        out["quick_speedup"] = q.prediction.step_speedup if q.prediction else None
        if out["quick_speedup"] and out.get("measured_speedup"):
            m = out["measured_speedup"]
            out["quick_error_pct"] = round(100 * (out["quick_speedup"] - m) / m, 2)
        out["quick_why_not"] = q.why_not or None
    return out


def _agrees(trial: float, measured: float, error: float) -> bool:
    """The trial's verdict is right (preflight.speedup.verdict_kind, with the error the trial
    stated: wider where the host limits its FP8 step): at the line, when the measured speed-up
    is inside the range it states; "will not pay" when the measured one is under NOT_WORTH;
    else when both say the same kind."""
    from preflight.speedup import speedup_range, verdict_kind

    kind = verdict_kind(trial, error)
    if kind == "at the line":
        lo, hi = speedup_range(trial, error)
        return lo <= measured <= hi
    real = verdict_kind(measured)
    return real == kind or (kind == "not worth" and real == "slower")


def versions() -> dict[str, Any]:
    import importlib.metadata as md

    got: dict[str, Any] = {}
    for name in ("torch", "torchao", "transformer-engine", "transformer_engine", "transformers",
                 "accelerate", "triton"):
        try:
            got[name] = md.version(name)
        except md.PackageNotFoundError:
            continue
    try:
        got["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                                     "--format=csv,noheader"], capture_output=True, text=True,
                                    timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        got["gpu"] = None
    return got


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=6)
    ap.add_argument("--quick", action="store_true", help="also the modelled estimate")
    ap.add_argument("--repeat-real", type=int, default=1,
                    help="real runs per precision, each a fresh process (median of medians)")
    ap.add_argument("--interleave", action="store_true",
                    help="BF16 and FP8 real runs in ABBA order, per case (no shared BF16 runs)")
    ap.add_argument("--real", nargs=5, metavar=("SHAPE", "BACKEND", "RECIPE", "MODE", "PREC"))
    args = ap.parse_args()
    if args.real:
        name, backend, recipe, mode, prec = args.real
        try:
            res = real_run(name, backend, recipe, mode == "compile", prec == "fp8", args.device,
                           args.warmup, args.steps)
        except Exception as exc:  # noqa: BLE001 - the parent records it
            res = {"error": f"{type(exc).__name__}: {str(exc)[:1000]}"}
        print(json.dumps(res), flush=True)
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           "versions": versions(), "steps": args.steps, "warmup": args.warmup,
                           "cases": []}
    bf16: dict[str, Any] = {}
    path = out / f"trial_validate{os.environ.get('TV_SUFFIX', '')}.json"
    doc["timeline"], doc["marks"] = [], MARKS
    stop = threading.Event()
    sampler = threading.Thread(target=_timeline, args=(args.device, doc["timeline"], stop),
                               daemon=True)
    sampler.start()
    for case in args.cases:
        doc["cases"].append(run_case(case, args, bf16))
        path.write_text(json.dumps(doc, indent=1, default=str))
        c = doc["cases"][-1]
        print(f"{case}: trial {c.get('trial_speedup')} measured {c.get('measured_speedup')} "
              f"err {c.get('trial_error_pct')}% quick {c.get('quick_speedup')} "
              f"({c.get('quick_error_pct')}%) trial {c['trial_wall_s']} s "
              f"margins {c.get('host_margins')} error {c['trial'].get('error')} "
              f"{c['trial'].get('why_not') or ''} {c['real_fp8'].get('error', '')[:300]}",
              flush=True)
    stop.set()


if __name__ == "__main__":
    main()
