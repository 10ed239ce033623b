"""Transformer Engine checks: availability, DelayedScaling numerics, a tiny training run, and the
run-time detector for the activation-checkpointing backward-scale bug (TE issue 1190, fixed in
1.12 by PR 1254). Runs inside the smoke child only; uses only TE's documented API:

- ``te.autocast(enabled, recipe=...)`` (TE >= 2.9) else ``te.fp8_autocast(enabled, fp8_recipe=...)``;
- ``transformer_engine.common.recipe``: ``DelayedScaling``, ``Format``, and where present
  ``Float8CurrentScaling`` (>= 2.2) and ``MXFP8BlockScaling`` (>= 2.0, cc >= 10.0);
- ``te.Linear(in, out, bias=..., params_dtype=...)`` and ``module.fp8_meta["scaling_fwd"|
  "scaling_bwd"].scale`` (FP8TensorMeta in 1.x, DelayedScalingRecipeState in 2.x);
- ``te.checkpoint(fn, *args)`` (``transformer_engine.pytorch.distributed.checkpoint``);
- ``FP8GlobalStateManager.is_fp8_available()`` from ``pytorch.quantization`` (2.x) or ``pytorch.fp8``.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.abc
import sys
import time
from collections.abc import Iterator
from typing import Any

from preflight.smoke import numerics as nm
from preflight.smoke import train as tr

ITERS = 3          # iteration 0 runs at scale 1 by design; judge iterations >= 1


def dims(device: str) -> tuple[int, int]:
    """(features, tokens): research section 9.4's 1024 x 256 on a GPU; 256 x 128 on the CPU,
    where SQNR is the same (it depends on the formats, not the shape: gpu-results.md) and the
    test suite must stay fast."""
    return (1024, 256) if device.startswith("cuda") else (256, 128)


def fp8_available(te_pt: Any) -> tuple[bool, str]:
    """TE's own verdict and reason string (reported verbatim)."""
    try:
        from transformer_engine.pytorch.quantization import FP8GlobalStateManager
    except ImportError:
        from transformer_engine.pytorch.fp8 import FP8GlobalStateManager
    ok, reason = FP8GlobalStateManager.is_fp8_available()
    return bool(ok), str(reason or "")


def autocast(te_pt: Any, recipe: Any) -> Any:
    """The FP8 context for this TE version: 2.9+ ``autocast``, else 1.x/2.x ``fp8_autocast``."""
    if hasattr(te_pt, "autocast"):
        return te_pt.autocast(enabled=True, recipe=recipe)
    return te_pt.fp8_autocast(enabled=True, fp8_recipe=recipe)


def delayed_recipe() -> Any:
    from transformer_engine.common import recipe

    return recipe.DelayedScaling(fp8_format=recipe.Format.HYBRID, amax_history_len=4,
                                 amax_compute_algo="max")


def extra_recipes(cc: tuple[int, int] | None) -> dict[str, Any]:
    """Recipes this TE version and device offer beyond DelayedScaling."""
    from transformer_engine.common import recipe

    out: dict[str, Any] = {}
    if hasattr(recipe, "Float8CurrentScaling"):
        out["current"] = recipe.Float8CurrentScaling()
    if hasattr(recipe, "MXFP8BlockScaling") and cc is not None and cc >= (10, 0):
        out["mxfp8"] = recipe.MXFP8BlockScaling()
    return out


def _linear(te_pt: Any, device: str, k: int, n: int, weight: Any = None) -> Any:
    import torch

    lin = te_pt.Linear(k, n, bias=False, params_dtype=torch.bfloat16)
    lin = lin.to(device)
    if weight is not None:
        with torch.no_grad():
            lin.weight.copy_(weight)
    return lin


def _scale(lin: Any, which: str) -> list[float]:
    """fp8_meta[which].scale as floats ([] where the recipe keeps no such state)."""
    scale = getattr(lin.fp8_meta.get(which), "scale", None)
    if scale is None:
        return []
    return [float(v) for v in scale.detach().float().flatten().cpu()]


def _te_checkpoint(te_pt: Any, fn: Any, x: Any) -> Any:
    try:
        return te_pt.checkpoint(fn, x)
    except TypeError:  # TE < 1.5: checkpoint(fn, distribute_saved_activations, tracker, group, *args)
        return te_pt.checkpoint(fn, False, None, None, x)


def numerics(te_pt: Any, device: str, recipe_factory: Any, *, checkpointed: bool = False,
             grad_scale: float = 1.0) -> dict[str, Any]:
    """ITERS iterations of one te.Linear vs an fp32 reference; fwd in autocast, bwd outside."""
    import torch

    dim, tokens = dims(device)
    torch.manual_seed(5)
    w = (torch.randn((dim, dim)) / dim ** 0.5).to(device)
    lin = _linear(te_pt, device, dim, dim, w)
    recipe = recipe_factory()
    g = torch.Generator(device="cpu").manual_seed(6)
    rows: list[dict[str, Any]] = []
    finite = True
    for _ in range(ITERS):
        x = torch.randn((tokens, dim), generator=g).to(device=device, dtype=torch.bfloat16)
        go = (torch.randn((tokens, dim), generator=g) * grad_scale).to(device=device, dtype=torch.bfloat16)
        x8 = x.clone().requires_grad_(True)
        with autocast(te_pt, recipe):
            y = _te_checkpoint(te_pt, lin, x8) if checkpointed else lin(x8)
        y.backward(go)  # outside the autocast, as in TE's own examples and issue 1190
        x32 = x.float().requires_grad_(True)
        y32 = x32 @ w.float().t()
        y32.backward(go.float())
        finite = finite and bool(torch.isfinite(y).all() and torch.isfinite(x8.grad).all())
        rows.append({"fwd": nm.sqnr_db(y32, y), "xgrad": nm.sqnr_db(x32.grad, x8.grad),
                     "x_grad": x8.grad.detach().clone()})
    last = rows[-1]
    out: dict[str, Any] = {"finite": finite, "fwd": last["fwd"], "xgrad": last["xgrad"],
                           "x_grad": last["x_grad"]}
    if isinstance(getattr(lin, "fp8_meta", None), dict) and "scaling_bwd" in lin.fp8_meta:
        out["fwd_scale"], out["bwd_scale"] = _scale(lin, "scaling_fwd"), _scale(lin, "scaling_bwd")
    return out


def drift(te_pt: Any, device: str) -> dict[str, Any]:
    """Same steps with and without te.checkpoint, small grads: bwd scales must update and agree."""
    a = numerics(te_pt, device, delayed_recipe, grad_scale=nm.DRIFT_GRAD_SCALE)
    b = numerics(te_pt, device, delayed_recipe, checkpointed=True, grad_scale=nm.DRIFT_GRAD_SCALE)
    agree = nm.sqnr_db(a["x_grad"], b["x_grad"])
    # Where this TE keeps no readable backward scale, judge by x.grad alone (never guess).
    readable = bool(a.get("bwd_scale")) and bool(b.get("bwd_scale"))
    updated = any(v != 1.0 for v in b["bwd_scale"]) if readable else None
    same_scale = a.get("bwd_scale") == b.get("bwd_scale") if readable else True
    return {
        "ckpt_bwd_scales_updated": updated,
        "ckpt_scale_drift": not (same_scale and nm.accurate(agree, nm.CKPT_AGREE_SQNR_DB)),
        "ckpt_agree_sqnr_db": nm.finite_or_none(agree),
        "ckpt_plain_xgrad_sqnr_db": nm.finite_or_none(a["xgrad"]),
        "ckpt_xgrad_sqnr_db": nm.finite_or_none(b["xgrad"]),
        "ckpt_plain_bwd_scale": a.get("bwd_scale", [])[:3],
        "ckpt_bwd_scale": b.get("bwd_scale", [])[:3],
    }


def train_check(te_pt: Any, device: str) -> dict[str, Any]:
    """The tiny model with TE Linear layers where the shapes allow, a few steps in autocast."""
    reference = tr.build_reference(device)
    model = copy.deepcopy(reference)
    reasons: dict[str, str] = {}
    for name in ("fc1", "fc2", "head"):
        old = getattr(model, name)
        why = tr.fp8_unfit_reason(old)
        if why:
            reasons[name] = why
            continue
        new = _linear(te_pt, device, old.in_features, old.out_features, old.weight)
        setattr(model, name, _with_bias(te_pt, device, new, old))
    converted, unconverted = tr.linear_report(model, is_te_module, reasons)
    share = tr.gemm_flops_share(model, is_te_module)
    recipe = delayed_recipe()

    def ctx() -> Any:
        return autocast(te_pt, recipe)

    x, y = tr.batch(device)
    gsqnr = tr.grad_sqnr(model, reference, converted, x, y, ctx, warmup=1)
    res = tr.judge(tr.train(model, x, y, ctx), gsqnr)
    res["converted"], res["unconverted"] = converted, unconverted
    res["gemm_flops_share"] = share
    return res


def is_te_module(module: Any) -> bool:
    return type(module).__module__.startswith("transformer_engine")


def _with_bias(te_pt: Any, device: str, new: Any, old: Any) -> Any:
    """te.Linear built without bias; rebuild with bias when the original had one."""
    import torch

    if old.bias is None:
        return new
    lin = te_pt.Linear(old.in_features, old.out_features, bias=True, params_dtype=torch.bfloat16).to(device)
    with torch.no_grad():
        lin.weight.copy_(old.weight)
        lin.bias.copy_(old.bias)
    return lin


def run_all(device: str, cc: tuple[int, int] | None, resume: bool = True) -> dict[str, Any]:
    """Every TE check; raises ImportError when TE is not importable. ``timings`` says where the
    stage's seconds go (benchmarks/te_stage.py and te_gpu.py read them)."""
    t0 = time.perf_counter()
    try:
        with _without_te_jax():
            import transformer_engine
            import transformer_engine.pytorch as te_pt
    except OSError as exc:
        # An incomplete install: TE 2.x finds its torch library (transformer_engine_torch) only
        # here, with "Could not find shared object file for Transformer Engine torch lib".
        raise RuntimeError(
            "Transformer Engine's PyTorch extension (transformer_engine_torch) is missing or "
            f"cannot be loaded ({type(exc).__name__}: {exc}); install transformer-engine[pytorch] "
            "built for this torch (pip install --no-build-isolation 'transformer-engine[pytorch]') "
            "or build the transformer_engine_torch sdist against it") from exc

    timings: dict[str, float] = {"import": round(time.perf_counter() - t0, 3)}
    res: dict[str, Any] = {"version": getattr(transformer_engine, "__version__", None),
                           "api": "autocast" if hasattr(te_pt, "autocast") else "fp8_autocast",
                           "recipe": "delayed", "timings": timings}
    ok, reason = fp8_available(te_pt)
    res["available"], res["reason"] = ok, reason
    if not ok:
        return res
    lap = _Lap(timings)
    n = numerics(te_pt, device, delayed_recipe)
    lap("numerics")
    res.update({
        "sqnr_db": nm.finite_or_none(n["fwd"]), "xgrad_sqnr_db": nm.finite_or_none(n["xgrad"]),
        "finite": n["finite"], "engaged": nm.engaged(n["fwd"]),
        "accurate": nm.accurate(n["fwd"]) and nm.accurate(n["xgrad"], nm.GRAD_SQNR_MIN_DB),
        "fwd_scales_updated": any(v != 1.0 for v in n.get("fwd_scale") or [1.0]),
    })
    recipes = {"delayed": res["sqnr_db"]}
    extra = extra_recipes(cc)
    for name, rec in extra.items():
        try:
            recipes[name] = nm.finite_or_none(numerics(te_pt, device, lambda r=rec: r)["fwd"])
        except Exception as exc:  # noqa: BLE001 - one recipe failing is a result, not an abort
            recipes[name] = None
            res.setdefault("recipe_errors", {})[name] = f"{type(exc).__name__}: {exc}"[:300]
    res["recipe_sqnr_db"] = recipes
    lap("recipes")
    res.update(drift(te_pt, device))
    lap("drift")
    res.update(train_check(te_pt, device))
    lap("train")
    if resume:
        from preflight.smoke import te_resume

        try:
            res.update(te_resume.run_all(te_pt, device, {
                k: v for k, v in extra.items() if k not in res.get("recipe_errors", {})}))
        except Exception as exc:  # noqa: BLE001 - the other checks' results must survive
            res["resume_status"] = "error"
            res["resume_error"] = f"{type(exc).__name__}: {exc}"[:600]
        lap("resume")
    return res


class _SkipTEJax(importlib.abc.MetaPathFinder):
    """Refuses ``transformer_engine.jax`` while TE is imported here.

    TE's package ``__init__`` imports its JAX side as well whenever JAX is installed (1.0 s of the
    7.4 s ``import transformer_engine.pytorch`` on the GPU image, ``python -X importtime``; issue
    15). The smoke step checks the PyTorch side only, and ImportError is what that ``__init__``
    expects when TE has no JAX support (``try: from . import jax / except ImportError: pass``).
    """

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "transformer_engine.jax" or name.startswith("transformer_engine.jax."):
            raise ImportError("the fp8-doctor smoke child does not import transformer_engine.jax")
        return None


@contextlib.contextmanager
def _without_te_jax() -> Iterator[None]:
    finder = _SkipTEJax()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


class _Lap:
    """Records the seconds since the previous lap under a name."""

    def __init__(self, into: dict[str, float]) -> None:
        self.into, self.t = into, time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.into[name] = round(now - self.t, 3)
        self.t = now
