"""The resume check for Transformer Engine (see resume_check.py for the verdicts).

DelayedScaling keeps FP8 state per module (``fp8_meta["scaling_fwd"|"scaling_bwd"]``: ``scale``
and ``amax_history``), saved as ``_extra_state``. Four ways of loading it, as jobs do:

- ``torch_save``: ``torch.save(model.state_dict())``, ``torch.load`` (torch's default
  ``weights_only``), ``load_state_dict`` - the job's own environment decides (a job with
  ``NVTE_ALLOW_UNSAFE_PICKLE_EXTRA_STATE=1`` restores; without it TE 2.16.1, 2.17.1 and >= 2.18
  refuse);
- ``unsafe_env``: the same with that variable set to 1 (TE's documented opt-in);
- ``dropped``: ``_extra_state`` removed and ``strict=False``, what people do to get past the error;
- ``dcp``: ``torch.distributed.checkpoint`` save and load on one rank.

Current scaling and MXFP8 (where the GPU has it) run ``torch_save`` only: they keep no state.
Runs inside the smoke child only.
"""

from __future__ import annotations

import os
from typing import Any

from preflight.smoke import resume_check as rc


def _state(model: Any) -> dict[str, list[float]] | None:
    """Scales and amax history of a te module (None where the recipe keeps none)."""
    meta = getattr(model, "fp8_meta", None)
    if not isinstance(meta, dict):
        return None
    out: dict[str, list[float]] = {}
    for which in ("scaling_fwd", "scaling_bwd"):
        st = meta.get(which)
        for attr in ("scale", "amax_history"):
            t = getattr(st, attr, None)
            if t is not None and hasattr(t, "flatten"):
                out[f"{which}.{attr}"] = [float(v) for v in t.detach().float().flatten().cpu()]
    return out or None


def _initial(state: dict[str, list[float]] | None) -> bool | None:
    """True when the scales are all 1.0 and the amax history all zero (never trained/restored)."""
    if not state:
        return None
    scales = [v for k, vs in state.items() if k.endswith(".scale") for v in vs]
    hist = [v for k, vs in state.items() if k.endswith(".amax_history") for v in vs]
    return all(v == 1.0 for v in scales) and all(v == 0.0 for v in hist)


def check_recipe(te_pt: Any, device: str, recipe_factory: Any, modes: tuple[str, ...],
                 folder: str) -> dict[str, Any]:
    """Train, save, and load in each of ``modes``; {mode: outcome} plus the trained state."""
    import torch

    from preflight.smoke.te_check import autocast

    def build(seed: int) -> Any:
        torch.manual_seed(seed)
        return te_pt.Linear(rc.DIM, rc.DIM, bias=True, params_dtype=torch.bfloat16).to(device)

    def forward(m: Any, x: Any) -> Any:
        with autocast(te_pt, recipe_factory()):
            return m(x)

    model = build(7)
    step = rc.train(model, device, forward, lambda m: m.weight, seed=21, scale=3)

    sd = model.state_dict()
    path = os.path.join(folder, "model.pt")
    torch.save(sd, path)
    trained = _state(model)
    stateful = bool(trained) and not _initial(trained)
    ref = step(model)   # the uninterrupted run's next step (after the save, as a job goes on)
    extra = sorted(k for k in sd if k.endswith(rc.EXTRA_STATE_SUFFIX))
    res: dict[str, Any] = {"stateful": stateful, "extra_state_keys": extra}
    for mode in modes:
        fresh = build(99)
        err: str | None
        if mode == "dcp":
            err = rc.dcp_round_trip(sd, fresh, os.path.join(folder, "dcp"))
        else:
            with rc.env_set(rc.UNSAFE_PICKLE_ENV, "1" if mode == "unsafe_env" else None):
                loaded, err = rc.torch_load(path)
                if err is None and mode == "dropped":
                    loaded = {k: v for k, v in loaded.items()
                              if not k.endswith(rc.EXTRA_STATE_SUFFIX)}
                if err is None:
                    err = rc.load_into(fresh, loaded, strict=mode != "dropped")
        # Read before the next step runs (which fills a fresh history): None = no state at all.
        loaded = _state(fresh) if err is None else None
        res[mode] = rc.outcome(mode, ref, fresh, step, err, _state, trained, stateful)
        if err is None:
            res[mode]["state_initial"] = _initial(loaded)
            res[mode]["state_after_load"] = "none" if loaded is None else "present"
    return res


def run_all(te_pt: Any, device: str, recipes: dict[str, Any]) -> dict[str, Any]:
    """Every recipe's resume check; flat ``resume_*`` fields from DelayedScaling's default path."""
    from preflight.smoke.te_check import delayed_recipe

    out: dict[str, Any] = {}
    details: dict[str, Any] = {}
    with rc.private_dir() as folder:
        plan: list[tuple[str, Any, tuple[str, ...]]] = [
            ("delayed", delayed_recipe, ("torch_save", "unsafe_env", "dropped", "dcp"))]
        plan += [(name, (lambda r=rec: r), ("torch_save",)) for name, rec in recipes.items()]
        for name, factory, modes in plan:
            sub = os.path.join(folder, name)
            os.makedirs(sub)
            try:
                details[name] = check_recipe(te_pt, device, factory, modes, sub)
            except BaseException as exc:  # noqa: BLE001 - one recipe failing is a result
                details[name] = {"torch_save": {"status": "error", "error": rc.failure(exc)}}
    out["resume"] = details
    delayed = details.get("delayed", {})
    out.update(rc.summary("resume_", delayed.get("torch_save", {})))
    for mode in ("unsafe_env", "dropped", "dcp"):
        if isinstance(delayed.get(mode), dict):
            out.update(rc.summary(f"resume_{mode}_", delayed[mode]))
    out["resume_stateless_recipes"] = sorted(
        n for n, d in details.items()
        if n != "delayed" and d.get("torch_save", {}).get("status") == "not_applicable")
    return out
