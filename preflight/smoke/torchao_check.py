"""torchao float8 training checks: conversion report, single-layer SQNR band, a tiny training run.
Runs inside the smoke child only.

API by version (research-te-torchao.md section 6): ``Float8LinearConfig.from_recipe_name`` from
torchao 0.9; before that ``recipe_name_to_linear_config``; a default ``Float8LinearConfig()`` is
tensorwise in every version. ``emulate=True`` runs the same Python path without FP8 hardware
(the CPU/CI path).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from preflight.smoke import numerics as nm
from preflight.smoke import train as tr


def is_fp8(mod: Any) -> bool:
    return type(mod).__name__ == "Float8Linear"


def make_config(emulate: bool) -> tuple[Any, str]:
    """(Float8LinearConfig for the tensorwise recipe, which API produced it)."""
    from torchao.float8 import Float8LinearConfig

    if hasattr(Float8LinearConfig, "from_recipe_name"):
        config, api = Float8LinearConfig.from_recipe_name("tensorwise"), "from_recipe_name"
    else:
        try:  # torchao <= 0.8
            from torchao.float8.config import Float8LinearRecipeName, recipe_name_to_linear_config

            config = recipe_name_to_linear_config(Float8LinearRecipeName.ALL_TENSORWISE)
            api = "recipe_name_to_linear_config"
        except ImportError:
            config, api = Float8LinearConfig(), "default_config"
    if emulate:
        config = dataclasses.replace(config, emulate=True)
    return config, api


def convert(model: Any, config: Any) -> tuple[Any, list[str], list[str]]:
    """Convert with a filter that records why a layer was skipped; returns the report too."""
    from torchao.float8 import convert_to_float8_training

    reasons: dict[str, str] = {}

    def keep(mod: Any, fqn: str) -> bool:
        why = tr.fp8_unfit_reason(mod)
        if why:
            reasons[fqn] = why
        return why is None

    model = convert_to_float8_training(model, module_filter_fn=keep, config=config)
    converted, unconverted = tr.linear_report(model, is_fp8, reasons)
    return model, converted, unconverted


def layer_numerics(device: str, config: Any) -> dict[str, Any]:
    """One 1024x1024 Linear, M=256 (256x256, M=128 on CPU): y, x.grad, w.grad SQNR vs fp32."""
    import torch
    from torch import nn

    from preflight.smoke.te_check import dims

    dim, tokens = dims(device)
    torch.manual_seed(3)
    ref = nn.Sequential(nn.Linear(dim, dim, bias=False)).to(device=device, dtype=torch.bfloat16)
    model, converted, _ = convert(copy.deepcopy(ref), config)
    ref32 = copy.deepcopy(ref).float()
    g = torch.Generator(device="cpu").manual_seed(4)
    x = torch.randn((tokens, dim), generator=g).to(device=device, dtype=torch.bfloat16)
    go = torch.randn((tokens, dim), generator=g).to(device=device, dtype=torch.bfloat16)
    x8 = x.clone().requires_grad_(True)
    x32 = x.float().requires_grad_(True)
    y8 = model(x8)
    y8.backward(go)
    y32 = ref32(x32)
    y32.backward(go.float())
    fwd = nm.sqnr_db(y32, y8)
    xg = nm.sqnr_db(x32.grad, x8.grad)
    wg = nm.sqnr_db(ref32[0].weight.grad, model[0].weight.grad)
    finite = bool(torch.isfinite(y8).all() and torch.isfinite(x8.grad).all()
                  and torch.isfinite(model[0].weight.grad).all())
    return {
        "sqnr_db": nm.finite_or_none(fwd),
        "xgrad_sqnr_db": nm.finite_or_none(xg),
        "wgrad_sqnr_db": nm.finite_or_none(wg),
        "finite": finite,
        "engaged": bool(converted) and nm.engaged(fwd),
        "accurate": nm.accurate(fwd) and nm.accurate(min(xg, wg), nm.GRAD_SQNR_MIN_DB),
    }


def run_all(device: str, emulate: bool, resume: bool = True) -> dict[str, Any]:
    """Every torchao check; raises ImportError when torchao is not importable."""
    import torchao

    config, api = make_config(emulate)
    res: dict[str, Any] = {"version": getattr(torchao, "__version__", None), "api": api,
                           "emulate": emulate, "recipe": "tensorwise"}
    res.update(layer_numerics(device, config))
    reference = tr.build_reference(device)
    model, converted, unconverted = convert(copy.deepcopy(reference), config)
    res["converted"], res["unconverted"] = converted, unconverted
    res["gemm_flops_share"] = tr.gemm_flops_share(model, is_fp8)
    x, y = tr.batch(device)
    gsqnr = tr.grad_sqnr(model, reference, converted, x, y, tr.nullctx)
    res.update(tr.judge(tr.train(model, x, y, tr.nullctx), gsqnr))
    if resume:
        from preflight.smoke import ao_resume

        res.update(ao_resume.run_all(device, emulate))
    return res
