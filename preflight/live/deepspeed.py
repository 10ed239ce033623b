"""Live DeepSpeed facts: the ZeRO stage the engine really runs (from its optimizer and the
model's parameters) against the one configured (``runtime.deepspeed.*``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.live import _qualname


def deepspeed_facts(engine: Any, ds_config: Any = None, *, optimizer: Any = None,
                    model: Any = None) -> dict[str, Any]:
    """The ZeRO stage the engine really runs (from its optimizer) vs the one configured.

    Without the engine (the HF Trainer hands callbacks the model and DeepSpeed's optimizer, not
    the engine), the optimizer and the model's parameters alone still tell the effective stage.
    """
    facts: dict[str, Any] = {"runtime.deepspeed.engine": engine is not None}
    opt = getattr(engine, "optimizer", None) if engine is not None else optimizer
    facts["runtime.deepspeed.optimizer_class"] = _qualname(opt) if opt is not None else "none"
    configured, source = _configured_stage(engine, ds_config)
    facts["runtime.deepspeed.zero_stage_configured"] = configured
    facts["runtime.deepspeed.zero_stage_configured_from"] = source
    stage_fn = getattr(engine, "zero_optimization_stage", None)
    if callable(stage_fn):
        facts["runtime.deepspeed.zero_stage_engine_config"] = int(stage_fn())
    effective = _effective_stage(getattr(engine, "module", None) if engine is not None
                                 else model, opt)
    facts["runtime.deepspeed.zero_stage"] = effective
    if isinstance(effective, int) and isinstance(configured, int):
        facts["runtime.deepspeed.zero_stage_downgraded"] = effective < configured
    for attr, name in (("bfloat16_enabled", "bf16"), ("fp16_enabled", "fp16")):
        fn = getattr(engine, attr, None)
        if callable(fn):
            facts[f"runtime.deepspeed.{name}"] = bool(fn())
    return facts


def _effective_stage(module: Any, opt: Any) -> int | Unknown:
    name = type(opt).__name__ if opt is not None else ""
    # ZeRO-3 tags every partitioned parameter with ds_id (partition_parameters.py).
    if "Stage3" in name or (module is not None and any(hasattr(p, "ds_id")
                                                       for p in module.parameters())):
        return 3
    if name in ("DeepSpeedZeroOptimizer", "ZenFlowZeroOptimizer"):
        # One class serves stages 1 and 2; stage 2 also partitions gradients (stage_1_and_2.py).
        return 2 if getattr(opt, "partition_gradients", False) else 1
    if name == "BF16_Optimizer":
        # DeepSpeed's bf16 optimizer partitions fp32 master weights and optimizer state across
        # data-parallel ranks, i.e. ZeRO-1 (bf16_optimizer.py); engine.py picks it for stage 1
        # with bf16 + fp32 gradient accumulation (and for bf16 pipeline parallelism).
        return 1
    if name in ("FP16_Optimizer", "FP16_UnfusedOptimizer") or (
            opt is not None and type(opt).__module__.startswith("torch.optim")):
        return 0
    return Unknown(f"optimizer {name or 'None'} is not one DeepSpeed's ZeRO stages use")


def _configured_stage(engine: Any, ds_config: Any) -> tuple[int | Unknown, str]:
    for source, cfg in (("ds_config argument", ds_config), ("engine.config", getattr(
            engine, "config", None))):
        stage = _stage_of(cfg)
        if stage is not None:
            return stage, source
    fn = getattr(engine, "zero_optimization_stage", None)
    if callable(fn):
        return int(fn()), "engine.zero_optimization_stage()"
    return Unknown("no DeepSpeed config was given or found on the engine"), "none"


def _stage_of(cfg: Any) -> int | None:
    if isinstance(cfg, str):
        try:
            with open(cfg, encoding="utf-8") as fh:
                cfg = json.load(fh)
        except (OSError, ValueError):
            return None
    if isinstance(cfg, Mapping):
        # DeepSpeed's default is stage 0 when the section or the key is absent; "auto" (filled in
        # by accelerate / the HF Trainer) is not a stage yet, so it is not an answer here.
        zero = cfg.get("zero_optimization", {})
        if not isinstance(zero, Mapping):
            return None
        stage = zero.get("stage", 0)
        return stage if isinstance(stage, int) and not isinstance(stage, bool) else None
    return None
