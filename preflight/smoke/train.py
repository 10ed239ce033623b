"""A tiny model, its data and a few optimizer steps: the "a model trains" check shared by the
torchao and Transformer Engine backends. Runs inside the smoke child only.

The model is small enough for a CPU test run (~0.1 s per step) yet has one layer FP8 cannot take
(out_features=10, not a multiple of 16), so the converted/unconverted report is exercised.
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Callable
from typing import Any

from preflight.smoke import numerics as nm

IN, HIDDEN, OUT, BATCH = 64, 128, 10, 256
STEPS = 6
LR = 1e-2

Ctx = Callable[[], Any]  # a context manager factory (FP8 autocast, or nullcontext)


def build_reference(device: str) -> Any:
    """The high-precision model every backend starts from (fixed seed: runs are comparable)."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential()
    model.add_module("fc1", nn.Linear(IN, HIDDEN))
    model.add_module("act", nn.GELU())
    model.add_module("fc2", nn.Linear(HIDDEN, IN))
    model.add_module("head", nn.Linear(IN, OUT))
    return model.to(device=device, dtype=torch.bfloat16)


def batch(device: str) -> tuple[Any, Any]:
    """Inputs and a learnable target (a fixed random teacher)."""
    import torch

    g = torch.Generator(device="cpu").manual_seed(2)
    x = torch.randn((BATCH, IN), generator=g)
    teacher = torch.randn((IN, OUT), generator=g) / math.sqrt(IN)
    y = torch.tanh(x @ teacher)
    return (x.to(device=device, dtype=torch.bfloat16), y.to(device=device, dtype=torch.bfloat16))


def fp8_unfit_reason(module: Any) -> str | None:
    """Why torch._scaled_mm cannot take this Linear (K and N must be multiples of 16)."""
    k, n = module.in_features, module.out_features
    if k % 16 or n % 16:
        return f"in_features={k}, out_features={n}: FP8 GEMMs need both divisible by 16"
    return None


def linear_report(model: Any, is_fp8: Callable[[Any], bool], reasons: dict[str, str]
                  ) -> tuple[list[str], list[str]]:
    """(converted fqns, ["fqn: reason"] for Linear layers left in high precision)."""
    from torch import nn

    converted, unconverted = [], []
    for fqn, mod in model.named_modules():
        if is_fp8(mod):
            converted.append(fqn)
        elif isinstance(mod, nn.Linear):
            why = reasons.get(fqn, "not converted by the backend (no reason given)")
            unconverted.append(f"{fqn}: {why}")
    return converted, unconverted


def gemm_flops_share(model: Any, is_fp8: Callable[[Any], bool]) -> float | None:
    """Share of the model's GEMM work per step that runs in FP8, as ``fp8-doctor inspect``
    computes it for a live model (preflight/base/fp8coverage.py: from weight shapes; every GEMM of a
    dense model sees every token). None where it cannot be said."""
    from torch import nn

    from preflight.base.fp8coverage import coverage_facts

    gemms = [(name, mod, is_fp8(mod)) for name, mod in model.named_modules()
             if is_fp8(mod) or isinstance(mod, nn.Linear)]
    share = coverage_facts(model, gemms).get("runtime.fp8.gemm_flops_share")
    return share if isinstance(share, float) else None


def grad_sqnr(model: Any, reference: Any, names: list[str], x: Any, y: Any, ctx: Ctx,
              warmup: int = 0) -> float:
    """Lowest weight-gradient SQNR of the FP8 layers ``names`` against an fp32 copy.

    ``warmup`` passes first fill a delayed-scaling amax history (TE's iteration 0 runs at scale
    1.0 by design, which is not what a training step sees)."""
    import torch

    for _ in range(warmup):
        with ctx():
            out = model(x)
        torch.nn.functional.mse_loss(out.float(), y.float()).backward()
        model.zero_grad(set_to_none=True)
    ref = copy.deepcopy(reference).float()
    torch.nn.functional.mse_loss(ref(x.float()), y.float()).backward()
    with ctx():
        out = model(x)
    torch.nn.functional.mse_loss(out.float(), y.float()).backward()
    ref_mods = dict(ref.named_modules())
    worst = math.inf
    for name in names:
        mod = dict(model.named_modules())[name]
        worst = min(worst, nm.sqnr_db(ref_mods[name].weight.grad, mod.weight.grad))
    model.zero_grad(set_to_none=True)
    return worst


def train(model: Any, x: Any, y: Any, ctx: Ctx, steps: int = STEPS) -> dict[str, Any]:
    """A few AdamW steps; loss must stay finite and fall."""
    import torch

    opt = torch.optim.AdamW(model.parameters(), lr=LR)
    losses: list[float] = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        with ctx():
            out = model(x)
        loss = torch.nn.functional.mse_loss(out.float(), y.float())
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    finite = all(math.isfinite(v) for v in losses)
    decreased = finite and losses[-1] < losses[0]
    return {"losses": [round(v, 6) for v in losses], "finite": finite, "loss_decreased": decreased}


def judge(train_res: dict[str, Any], gsqnr: float) -> dict[str, Any]:
    """Fold a training run and its gradient SQNR into the smoke result fields."""
    grads_ok = nm.accurate(gsqnr, nm.GRAD_SQNR_MIN_DB)
    return {
        "train_losses": train_res["losses"],
        "loss_decreased": train_res["loss_decreased"],
        "train_finite": train_res["finite"],
        "train_grad_sqnr_db": nm.finite_or_none(gsqnr),
        "train_grads_in_band": grads_ok,
        "train_ok": bool(train_res["loss_decreased"] and train_res["finite"] and grads_ok),
    }


def nullctx() -> Any:
    return contextlib.nullcontext()
