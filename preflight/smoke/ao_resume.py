"""The resume check for torchao float8 training (see resume_check.py for the verdicts).

torchao's float8 recipes scale dynamically (tensorwise, rowwise): ``Float8Linear`` keeps no amax
history or scale between steps, so the expected verdict is ``not_applicable`` - unless loading
itself fails. With ``enable_fsdp_float8_all_gather`` the weights are
``WeightWithDynamicFloat8CastTensor`` subclasses, which ``torch.load(weights_only=True)`` refuses
unless torchao registered them as safe globals (torchtitan issue 651). ``torch_save`` and ``dcp``
run for each recipe. Runs inside the smoke child only; on the CPU with ``emulate=True``.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from typing import Any

from preflight.smoke import resume_check as rc


def _config(recipe: str, emulate: bool, all_gather: bool) -> Any:
    from torchao.float8 import Float8LinearConfig

    config = Float8LinearConfig.from_recipe_name(recipe)
    changes: dict[str, Any] = {}
    if emulate:
        changes["emulate"] = True
    if all_gather:
        changes["enable_fsdp_float8_all_gather"] = True
    return dataclasses.replace(config, **changes) if changes else config


def check_recipe(device: str, config: Any, folder: str) -> dict[str, Any]:
    """Train, save, load (torch.save/torch.load and DCP) into a fresh converted model."""
    import torch
    from torch import nn
    from torchao.float8 import convert_to_float8_training

    def build(seed: int) -> Any:
        torch.manual_seed(seed)
        ref = nn.Sequential(nn.Linear(rc.DIM, rc.DIM, bias=True)).to(device=device,
                                                                      dtype=torch.bfloat16)
        return convert_to_float8_training(ref, config=copy.deepcopy(config))

    model = build(7)
    step = rc.train(model, device, lambda m, x: m(x), lambda m: m[0].weight, seed=31)

    sd = model.state_dict()
    path = os.path.join(folder, "model.pt")
    torch.save(sd, path)
    ref = step(model)
    res: dict[str, Any] = {"stateful": False,
                           "weight_type": type(model[0].weight.data).__name__}
    for mode in ("torch_save", "dcp"):
        fresh = build(99)
        if mode == "dcp":
            err = rc.dcp_round_trip(sd, fresh, os.path.join(folder, "dcp"))
        else:
            loaded, err = rc.torch_load(path)
            if err is None:
                err = rc.load_into(fresh, loaded)
        res[mode] = rc.outcome(mode, ref, fresh, step, err, None, None, False)
    return res


def run_all(device: str, emulate: bool) -> dict[str, Any]:
    """tensorwise, rowwise, and tensorwise with FSDP float8 all-gather weights."""
    details: dict[str, Any] = {}
    plan = (("tensorwise", "tensorwise", False), ("rowwise", "rowwise", False),
            ("tensorwise_fsdp_all_gather", "tensorwise", True))
    with rc.private_dir() as folder:
        for name, recipe, all_gather in plan:
            sub = os.path.join(folder, name)
            os.makedirs(sub)
            try:
                details[name] = check_recipe(device, _config(recipe, emulate, all_gather), sub)
            except BaseException as exc:  # noqa: BLE001 - one recipe failing is a result
                details[name] = {"torch_save": {"status": "error", "error": rc.failure(exc)}}
    out: dict[str, Any] = {"resume": details}
    out.update(rc.summary("resume_", details["tensorwise"].get("torch_save", {})))
    for name in ("rowwise", "tensorwise_fsdp_all_gather"):
        out.update(rc.summary(f"resume_{name}_", details[name].get("torch_save", {})))
    out.update(rc.summary("resume_dcp_", details["tensorwise"].get("dcp", {})))
    return out
