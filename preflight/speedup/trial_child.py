"""The speed-up trial's child: ``python -m preflight.speedup.trial_child REQUEST.json``; one result
JSON line on stdout.

For each precision the request names (``precisions``: the parent asks for ``fp8`` in one child
and ``bf16`` in a fresh one, trial.py says why; both when it names none), at each requested
depth: build the model
(:mod:`.trial_model`) with random weights, apply FP8, ``torch.compile`` it when the job compiles,
and train on random token ids with the job's optimizer (fused AdamW on CUDA): ``warmup`` steps
(compilation happens there), then ``steps`` timed steps, each the host time of forward, backward,
optimizer step and zero_grad between two device synchronisations (what a training loop's step
costs). The median step, every step, and the peak memory allocated are returned; the parent
extrapolates to the full depth. The request lists depth pairs deepest first
(``depth_options``): the child trains the first whose memory floor fits, and the next one when
the deeper pair runs out of memory all the same (``fell_back`` says why); the result names the
depths it trained.

Memory: before anything is allocated the caching allocator is capped at the request's
``mem_fraction`` of the memory free on the device (``torch.cuda.set_per_process_memory_fraction``),
so a trial that would not fit fails with an out-of-memory error, reported, instead of taking the
GPU from other work. A Transformer Engine request for FP8 imports TE before torch touches cuDNN
(importing it after failed on the GPU machine: docs/gpu-results.md); a BF16 child imports no FP8
backend (``backend_loaded`` in the result says whether one was loaded).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from typing import Any

from preflight.speedup import childwhy, gpubusy, hostmargin, trial_model


def _step_fn(torch: Any, model: Any, opt: Any, ids: Any, generic: bool, ctx: Any) -> Any:
    def step() -> None:
        with ctx():
            loss = trial_model.train_loss(model, ids, generic)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def _sync(torch: Any, device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def run_one(torch: Any, req: dict[str, Any], depth: int, precision: str) -> dict[str, Any]:
    """Build, convert, (compile,) train and time one model; its tensors go with this frame."""
    device, spec = req["device"], req["spec"]
    on_cuda = device.startswith("cuda")
    model, built = trial_model.build(torch, spec, depth, device)
    generic = built.startswith("generic")
    ctx: Any = contextlib.nullcontext
    converted = 0
    if precision == "fp8":
        if req["backend"] == "te":
            import transformer_engine.pytorch as te

            from preflight.smoke.te_check import autocast

            converted = trial_model.to_te(torch, model, device)
            recipe = trial_model.te_recipe(req["recipe"])
            ctx = lambda: autocast(te, recipe)  # noqa: E731
        else:
            converted = trial_model.to_torchao(torch, model, req["recipe"], emulate=not on_cuda)
    if req.get("compile"):
        model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5,
                            **({"fused": True} if on_cuda else {"foreach": True}))
    gen = torch.Generator(device="cpu").manual_seed(1)
    ids = torch.randint(0, spec["vocab"], (spec["micro_batch"], spec["seq"]),
                        generator=gen).to(device)
    step = _step_fn(torch, model, opt, ids, generic, ctx)
    if on_cuda:
        torch.cuda.reset_peak_memory_stats(device)
    t0 = time.perf_counter()
    for _ in range(req["warmup"]):
        step()
    _sync(torch, device)
    warm_s = time.perf_counter() - t0
    times = []
    busy = gpubusy.Busy(torch, device) if on_cuda else None
    for _ in range(req["steps"]):
        _sync(torch, device)
        t = time.perf_counter()
        step()
        _sync(torch, device)
        times.append(time.perf_counter() - t)
        if busy is not None:
            busy.sample()
    peak = torch.cuda.max_memory_allocated(device) if on_cuda else None
    params = sum(p.numel() for p in model.parameters())
    return {"depth": depth, "precision": precision, "median_s": sorted(times)[len(times) // 2],
            "times_s": [round(x, 6) for x in times], "warmup_s": round(warm_s, 3),
            "peak_bytes": peak, "params": params, "model": built, "fp8_linears": converted,
            "busy_pct": busy.samples if busy is not None else []}


def precisions(req: dict[str, Any]) -> list[str]:
    """The precisions this child trains, in order (a request of the older form: both)."""
    asked = req.get("precisions")
    if not isinstance(asked, list) or not asked:
        return ["bf16", "fp8"]
    return [p for p in ("bf16", "fp8") if p in asked]


def backend_loaded() -> bool:
    """Whether an FP8 backend is imported in this process (a BF16 child must have none)."""
    return any(name in sys.modules for name in ("transformer_engine", "torchao"))


def run(req: dict[str, Any]) -> dict[str, Any]:
    if req.get("backend") == "te" and "fp8" in precisions(req):
        try:
            import transformer_engine.pytorch  # noqa: F401 - before torch loads its cuDNN
        except Exception as exc:  # noqa: BLE001 - reported, the parent says why
            return {"status": "failed",
                    "reason": childwhy.reason(exc, 300, "Transformer Engine does not import here")}
    import torch

    device = req.get("device", "cuda")
    out: dict[str, Any] = {"torch": torch.__version__, "device": device}
    # Depth pairs, deepest first (trial.depth_options); a request of the older form names one.
    options: list[dict[str, Any]] = list(req.get("depth_options") or [
        {"depths": req.get("depths") or [], "need_bytes": req.get("need_bytes")}])
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            return {"status": "skipped", "torch": torch.__version__,
                    "reason": "torch sees no CUDA device (the trial trains on a GPU; "
                              "--device cpu runs it on the CPU)"}
        if ":" not in device:   # set_device and the memory queries want an index
            device = req["device"] = f"cuda:{torch.cuda.current_device()}"
        torch.cuda.set_device(device)
        free, total = torch.cuda.mem_get_info(device)
        cap = float(req["mem_fraction"]) * free
        torch.cuda.set_per_process_memory_fraction(min(1.0, cap / total), device)
        out.update(device_name=torch.cuda.get_device_name(device), free_bytes=free,
                   total_bytes=total, cap_bytes=int(cap))
        fitting = fits(options, cap)
        if not fitting:
            least = min(float(o.get("need_bytes") or 0) for o in options)
            return {**out, "status": "refused",
                    "reason": f"the trial needs about {least / 2**30:.1f} GiB, more "
                              f"than {req['mem_fraction']:.0%} of the {free / 2**30:.1f} GiB "
                              "free on this GPU"}
        options = fitting
    else:
        out["device_name"] = "cpu"
    started = time.perf_counter()
    result: dict[str, Any] = {}
    for n, option in enumerate(options):
        result = _train(torch, req, [int(d) for d in option["depths"]], device, out)
        out_of_memory = result.get("status") == "refused"
        if not out_of_memory or n == len(options) - 1:
            break
        out.setdefault("fell_back", []).append(result.get("reason"))
    return {**result, "seconds": round(time.perf_counter() - started, 2)}


def fits(options: list[dict[str, Any]], cap: float) -> list[dict[str, Any]]:
    """The depth options whose memory floor is within ``cap`` bytes, in the request's order."""
    return [o for o in options if cap >= float(o.get("need_bytes") or 0)]


def _train(torch: Any, req: dict[str, Any], depths: list[int], device: str,
           out: dict[str, Any]) -> dict[str, Any]:
    """Both precisions at ``depths``; an out-of-memory error is "refused" (the caller may try a
    shallower pair), any other failure "failed"."""
    runs = []
    for precision in precisions(req):
        for depth in depths:
            try:
                runs.append(run_one(torch, req, depth, precision))
            except Exception as exc:  # noqa: BLE001 - an OOM or a backend error is the answer
                text = f"{type(exc).__name__}: {str(exc)[:400]}"
                oom = "out of memory" in text.lower()
                return {**out, "status": "refused" if oom else "failed", "runs": runs,
                        "depths": depths,
                        "reason": (f"{precision} at depth {depth} does not fit in "
                                   f"{req['mem_fraction']:.0%} of the free GPU memory ({text})"
                                   if oom else f"{precision} at depth {depth}: {text}")}
            finally:
                if device.startswith("cuda"):
                    torch.cuda.empty_cache()
            if req.get("compile"):
                torch._dynamo.reset()   # each model is compiled afresh, as the job compiles it
        if req.get("host_twin") and not req.get("compile") and runs:
            # the host's time to issue this precision's step at the deepest depth (hostmargin)
            runs[-1].update(hostmargin.time_twin(run_one, torch, req, depths[-1], precision))
            if device.startswith("cuda"):
                torch.cuda.empty_cache()
    return {**out, "status": "ok", "runs": runs, "depths": depths,
            "backend_loaded": backend_loaded()}


def main() -> int:
    try:
        with open(sys.argv[1], encoding="utf-8") as fh:
            result = run(json.load(fh))
    except Exception as exc:  # noqa: BLE001 - the parent turns this into a clear failure
        result = {"status": "failed", "reason": childwhy.reason(exc, 500)}
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
