"""A tiny model, its data and a few optimizer steps: the "a model trains" check shared by the
torchao and Transformer Engine backends. Runs inside the smoke child only.

The model is small enough for a CPU test run (~0.1 s per step) yet has one layer FP8 cannot take
(out_features=10, not a multiple of 16), so the converted/unconverted report is exercised. On a GPU
its FP8 layers are 1024 wide (``GPU_IN``: Transformer Engine then reuses its numerics check's
kernels).
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Callable
from typing import Any

from preflight.smoke import numerics as nm

IN, HIDDEN, OUT, BATCH = 64, 128, 10, 256   # the model on the CPU
STEPS = 6
LR = 1e-2
# On a GPU the FP8 layers take the TE numerics check's shapes (1024 features, 256 tokens:
# te_check.dims), so Transformer Engine reuses the cast-transpose kernels it compiled with NVRTC
# for that check instead of compiling more for 64- and 128-wide tensors (it compiles per shape
# class and caches in the process only: the training check's first pass cost 0.68-0.79 s on an
# H100 / H200, docs/gpu-results.md). AdamW moves each weight by about lr per step, so at this
# width 1e-2 diverges (losses 0.40 -> 20.5 -> 39.4) where 3e-4 falls at every step (0.40 -> 0.11).
GPU_IN, GPU_HIDDEN, GPU_LR = 1024, 1024, 3e-4

Ctx = Callable[[], Any]  # a context manager factory (FP8 autocast, or nullcontext)


def sizes(device: str) -> tuple[int, int, float]:
    """(in features, hidden features, learning rate) of the model on ``device``."""
    return (GPU_IN, GPU_HIDDEN, GPU_LR) if device.startswith("cuda") else (IN, HIDDEN, LR)


def build_reference(device: str, like: str | None = None) -> Any:
    """The high-precision model every backend starts from (fixed seed: runs are comparable);
    ``like``: the device whose sizes it takes (``device`` itself by default)."""
    import torch
    from torch import nn

    n_in, hidden, _ = sizes(like or device)
    torch.manual_seed(0)
    model = nn.Sequential()
    model.add_module("fc1", nn.Linear(n_in, hidden))
    model.add_module("act", nn.GELU())
    model.add_module("fc2", nn.Linear(hidden, n_in))
    model.add_module("head", nn.Linear(n_in, OUT))
    return model.to(device=device, dtype=torch.bfloat16)


def batch(device: str, like: str | None = None) -> tuple[Any, Any]:
    """Inputs and a learnable target (a fixed random teacher)."""
    import torch

    n_in = sizes(like or device)[0]
    g = torch.Generator(device="cpu").manual_seed(2)
    x = torch.randn((BATCH, n_in), generator=g)
    teacher = torch.randn((n_in, OUT), generator=g) / math.sqrt(n_in)
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


def train(model: Any, x: Any, y: Any, ctx: Ctx, steps: int = STEPS,
          lr: float | None = None) -> dict[str, Any]:
    """A few AdamW steps; loss must stay finite and fall (``lr``: the device's by default)."""
    import torch

    opt = torch.optim.AdamW(model.parameters(), lr=lr or sizes(str(x.device))[2])
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
