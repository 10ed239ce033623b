"""``preflight.inspect``: facts from the live model / optimizer / Accelerator / DeepSpeed engine.

Static checks predict from configs; this module looks at the objects a training script actually
built, so "the FP8 run is really BF16" (no FP8 module at all), Linear layers left in high
precision, optimizer state without an fp32 master copy, or a DeepSpeed engine running another ZeRO
stage than the config asked for are seen as they are. It produces ``runtime.*`` facts (registered
in ``preflight/registry/runtime.py``) and runs the same rule engine over them.

torch is never imported at module import: the objects passed in imply it is loaded already, and
FP8 module types (Transformer Engine, torchao, MS-AMP) are recognised by class name and module
path, so none of those libraries needs to be installed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from preflight.base.fp8coverage import coverage_facts
from preflight.facts import Facts, Unknown
from preflight.report import Report

# (module-path prefix, class names) -> backend. Only GEMM-carrying modules are counted, so a TE
# TransformerLayer is counted through its LayerNormLinear / LayerNormMLP children, not twice.
FP8_MODULES: tuple[tuple[str, frozenset[str], str], ...] = (
    ("transformer_engine.pytorch", frozenset({"Linear", "LayerNormLinear", "LayerNormMLP",
                                              "GroupedLinear"}), "te"),
    ("torchao.float8", frozenset({"Float8Linear"}), "torchao"),
    ("torchao.prototype.mx_formats", frozenset({"MXLinear"}), "torchao"),
    ("msamp", frozenset({"FP8Linear", "LinearReplacer", "ScalingLinear"}), "msamp"),
)
LOW_PRECISION = frozenset({"bfloat16", "float16", "float8_e4m3fn", "float8_e5m2",
                           "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"})
# Reasons a Linear stayed in high precision (values of runtime.fp8.unconverted[].reason).
DIMS = "dims_not_multiple_of_16"
SIBLING = "after_unaligned_sibling"
FIRST_LAST = "first_or_last_linear"
FILTERED = "filtered"
NONE_CONVERTED = "model_not_converted"  # no FP8 module anywhere: no per-layer guess applies
_BACKEND_NAMES = {"TE": "te", "AO": "torchao", "MSAMP": "msamp", "NO": "none"}


def _qualname(obj: Any) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def _fp8_backend(module: Any) -> str | None:
    cls = type(module)
    for prefix, names, backend in FP8_MODULES:
        if cls.__module__.startswith(prefix) and cls.__name__ in names:
            return backend
    return None


def _dtype(t: Any) -> str:
    return str(t.dtype).replace("torch.", "")


def model_facts(model: Any, *, backend: str | None = None,
                max_listed: int = 64) -> dict[str, Any]:
    """FP8 coverage of a model: FP8 modules by type, and each Linear left in high precision."""
    import torch

    converted: dict[str, int] = {}
    backends: set[str] = set()
    gemms: list[tuple[str, Any, bool]] = []  # (name, module, is_fp8) in module order
    for name, module in model.named_modules():
        found = _fp8_backend(module)
        if found:
            converted[_qualname(module)] = converted.get(_qualname(module), 0) + 1
            backends.add(found)
            gemms.append((name, module, True))
        elif isinstance(module, torch.nn.Linear):
            gemms.append((name, module, False))
    backend = backend or (sorted(backends)[0] if len(backends) == 1 else None)
    unconverted = [_unconverted(i, gemms, backend, any_fp8=bool(converted))
                   for i, g in enumerate(gemms) if not g[2]]
    params: dict[str, int] = {}
    for p in model.parameters():
        params[_dtype(p)] = params.get(_dtype(p), 0) + _numel(p)
    facts: dict[str, Any] = {
        "runtime.model.class": _qualname(model),
        "runtime.fp8.converted": sum(converted.values()),
        "runtime.fp8.module_types": sorted(converted),
        "runtime.fp8.backends": sorted(backends),
        "runtime.fp8.linear_total": len(gemms),
        "runtime.fp8.unconverted_count": len(unconverted),
        "runtime.fp8.unconverted": unconverted[:max_listed],
        "runtime.fp8.unconverted_reasons": sorted({u["reason"] for u in unconverted}),
        "runtime.params.dtypes": sorted(params),
        "runtime.params.numel_by_dtype": dict(sorted(params.items())),
        "runtime.params.low_precision": any(d in LOW_PRECISION for d in params),
    }
    facts.update(coverage_facts(model, gemms))
    return facts


def _numel(p: Any) -> int:
    # ZeRO-3 partitions parameters: the module keeps an empty placeholder and records the full
    # size in ds_numel (deepspeed/runtime/zero/partition_parameters.py).
    return int(getattr(p, "ds_numel", 0) or p.numel())


def _dims(module: Any) -> tuple[int | None, int | None]:
    return getattr(module, "in_features", None), getattr(module, "out_features", None)


def _unaligned(module: Any) -> bool:
    i, o = _dims(module)
    return (isinstance(i, int) and i % 16 != 0) or (isinstance(o, int) and o % 16 != 0)


def _unconverted(index: int, gemms: Sequence[tuple[str, Any, bool]],
                 backend: str | None, *, any_fp8: bool) -> dict[str, Any]:
    name, module, _ = gemms[index]
    i, o = _dims(module)
    if _unaligned(module):
        # FP8 GEMMs need both dims divisible by 16; accelerate's torchao filter skips such layers
        # (accelerate/utils/ao.py filter_linear_layers) and TE's convert_model stops at them.
        # Worth naming even when nothing was converted: they would stay in high precision.
        reason = DIMS
    elif not any_fp8:
        # Nothing was converted at all (FP8D-RT-0001): "first/last" or "filtered" would be a
        # guess about a conversion that never ran.
        reason = NONE_CONVERTED
    elif backend == "te" and _after_unaligned_sibling(name, gemms[:index]):
        # accelerate's TE convert_model does `return` instead of `continue` at an unaligned
        # Linear, leaving every later sibling in high precision (accelerate PR #1188, unfixed).
        reason = SIBLING
    elif index in (0, len(gemms) - 1):
        # accelerate's AORecipeKwargs default filter skips the first and last Linear
        # (filter_first_and_last_linear_layers): usually the input projection and the lm_head.
        reason = FIRST_LAST
    else:
        reason = FILTERED
    return {"name": name or "<root>", "in": i, "out": o, "reason": reason}


def _after_unaligned_sibling(name: str, before: Sequence[tuple[str, Any, bool]]) -> bool:
    parent = name.rsplit(".", 1)[0] if "." in name else ""
    return any((n.rsplit(".", 1)[0] if "." in n else "") == parent and _unaligned(m)
               for n, m, is_fp8 in before if not is_fp8)


def optimizer_facts(optimizer: Any) -> dict[str, Any]:
    """Dtypes of what the optimizer updates (its master copy) and of its state."""
    groups = getattr(optimizer, "param_groups", None) or []
    tensors = [p for g in groups for p in g.get("params", [])]
    if not tensors:
        # DeepSpeed ZeRO-3 puts its fp32 partitions into param_groups only during step()
        # (stage3.py _set_fp32_optimizer_param_groups); read the master copy where it lives.
        for attr in _MASTER_ATTRS:
            held = getattr(optimizer, attr, None)
            if isinstance(held, (list, tuple)):
                tensors.extend(t for t in _flatten(held) if hasattr(t, "dtype"))
    param_dtypes = sorted({_dtype(p) for p in tensors if hasattr(p, "dtype") and p.dim() > 0})
    facts: dict[str, Any] = {"runtime.optimizer.class": _qualname(optimizer),
                             "runtime.optimizer.param_dtypes": param_dtypes}
    if param_dtypes:
        facts["runtime.optimizer.master_fp32"] = all(d == "float32" for d in param_dtypes)
    else:
        facts["runtime.optimizer.master_fp32"] = Unknown("the optimizer holds no parameters")
    state = getattr(optimizer, "state", None) or {}
    state_dtypes = sorted({_dtype(v) for s in _values(state) if isinstance(s, Mapping)
                           for v in s.values() if hasattr(v, "dtype") and v.dim() > 0})
    if state_dtypes:
        facts["runtime.optimizer.state_dtypes"] = state_dtypes
        facts["runtime.optimizer.state_fp32"] = all(d == "float32" for d in state_dtypes)
    else:
        why = "optimizer state is empty until the first optimizer.step()"
        facts["runtime.optimizer.state_dtypes"] = Unknown(why)
        facts["runtime.optimizer.state_fp32"] = Unknown(why)
    return facts


# Where DeepSpeed's wrappers keep the fp32 master copy (stage3.py, stage_1_and_2.py,
# bf16_optimizer.py, fp16/fused_optimizer.py, fp16/unfused_optimizer.py).
_MASTER_ATTRS = ("fp32_partitioned_groups_flat", "single_partition_of_fp32_groups",
                 "fp32_groups_flat_partition", "fp32_groups_flat", "fp32_groups")


def _flatten(items: Iterable[Any]) -> Iterable[Any]:
    for item in items:
        if isinstance(item, (list, tuple)):
            yield from _flatten(item)
        else:
            yield item


def _values(state: Any) -> Iterable[Any]:
    return state.values() if isinstance(state, Mapping) else ()


def accelerate_facts(accelerator: Any) -> dict[str, Any]:
    """Accelerate's view: mixed precision, FP8 backend and recipe handler, distributed type."""
    facts: dict[str, Any] = {}
    mp = getattr(accelerator, "mixed_precision", None)
    facts["runtime.accelerate.mixed_precision"] = str(mp) if mp is not None else "no"
    try:
        backend = accelerator.fp8_backend
        raw = getattr(backend, "value", backend)
        facts["runtime.accelerate.fp8_backend"] = _BACKEND_NAMES.get(str(raw), str(raw).lower())
    except Exception as exc:  # noqa: BLE001 - older accelerate: no property, or it raises
        facts["runtime.accelerate.fp8_backend"] = Unknown(f"{type(exc).__name__}: {exc}")
    handlers = [h for h in (getattr(accelerator, a, None) for a in (
        "fp8_recipe_handler", "te_recipe_handler", "ao_recipe_handler", "msamp_recipe_handler"))
        if h is not None]
    facts["runtime.accelerate.fp8_recipe"] = type(handlers[0]).__name__ if handlers else "none"
    if handlers:
        facts["runtime.accelerate.fp8_recipe_details"] = {
            k: str(v) for k, v in sorted(vars(handlers[0]).items()) if not k.startswith("_")}
    dist = getattr(accelerator, "distributed_type", None)
    if dist is not None:
        facts["runtime.accelerate.distributed_type"] = str(getattr(dist, "value", dist)).lower()
    plugin = getattr(getattr(accelerator, "state", None), "deepspeed_plugin", None)
    if plugin is not None and isinstance(getattr(plugin, "zero_stage", None), int):
        facts["runtime.accelerate.deepspeed_zero_stage"] = plugin.zero_stage
    return facts


def fsdp_facts(model: Any) -> dict[str, Any]:
    """FSDP version and mixed-precision policy of the outermost FSDP module, if any."""
    for _, module in model.named_modules():
        cls = type(module)
        if cls.__name__ == "FullyShardedDataParallel":
            policy = getattr(module, "mixed_precision", None)
            return _policy_facts(1, policy)
        state_fn = getattr(module, "_get_fsdp_state", None)
        if cls.__name__.startswith("FSDP") and callable(state_fn):
            policy = getattr(state_fn(), "_mp_policy", None)
            return _policy_facts(2, policy)
    return {}


def _policy_facts(version: int, policy: Any) -> dict[str, Any]:
    def dt(name: str) -> str:
        value = getattr(policy, name, None)
        return str(value).replace("torch.", "") if value is not None else "none"

    return {"runtime.fsdp.version": version, "runtime.fsdp.param_dtype": dt("param_dtype"),
            "runtime.fsdp.reduce_dtype": dt("reduce_dtype"),
            "runtime.fsdp.mixed_precision": policy is not None and getattr(
                policy, "param_dtype", None) is not None}


def runtime_facts(model: Any, optimizer: Any = None, accelerator: Any = None,
                  expect_fp8: bool = True, *, engine: Any = None, ds_config: Any = None,
                  backend: str | None = None, max_listed: int = 64) -> Facts:
    """All ``runtime.*`` facts for the given objects (what :func:`inspect` evaluates)."""
    if engine is None and type(model).__name__ == "DeepSpeedEngine":
        engine = model  # accelerate.prepare returns the engine itself under DeepSpeed
    if engine is None and accelerator is not None:
        wrapped = getattr(accelerator, "deepspeed_engine_wrapped", None)
        engine = getattr(wrapped, "engine", None)
    if optimizer is None and engine is not None:
        optimizer = getattr(engine, "optimizer", None)
    optimizer = _unwrap_optimizer(optimizer)
    values: dict[str, Any] = {"runtime.inspected": True, "runtime.expect_fp8": expect_fp8,
                              "runtime.expect_fp8_from": f"inspect(expect_fp8={expect_fp8})",
                              "runtime.expect_fp8_off": "call inspect(..., expect_fp8=False)",
                              "runtime.inspect_point": "the model returned by accelerator.prepare() "
                                                       "(or after the FP8 conversion)"}
    acc = accelerate_facts(accelerator) if accelerator is not None else {}
    if backend is None and isinstance(acc.get("runtime.accelerate.fp8_backend"), str):
        backend = acc["runtime.accelerate.fp8_backend"]
        backend = None if backend == "none" else backend
    values.update(model_facts(model, backend=backend, max_listed=max_listed))
    values["runtime.optimizer.given"] = optimizer is not None
    if optimizer is not None:
        values.update(optimizer_facts(optimizer))
    values.update(acc)
    from preflight.live.deepspeed import deepspeed_facts  # imports this module: not at the top

    if engine is not None:
        values.update(deepspeed_facts(engine, ds_config))
    elif optimizer is not None and type(optimizer).__module__.startswith("deepspeed."):
        values.update(deepspeed_facts(None, ds_config, optimizer=optimizer, model=model))
    values.update(fsdp_facts(model))
    values["runtime.model.device_types"] = sorted(
        {str(getattr(getattr(p, "device", None), "type", "unknown")) for p in model.parameters()})
    from preflight.live.resume import resume_facts  # FP8 scaling state after a resume

    values.update(resume_facts(model, optimizer))
    return Facts(values, {name: "inspect" for name in values})


def _unwrap_optimizer(optimizer: Any) -> Any:
    """The optimizer under accelerate's wrappers (AcceleratedOptimizer, DeepSpeedOptimizerWrapper),
    so DeepSpeed's ZeRO optimizer is seen as itself (the HF Trainer hands callbacks the wrapper)."""
    for _ in range(4):
        inner = getattr(optimizer, "optimizer", None)
        if inner is None or not type(optimizer).__module__.startswith("accelerate."):
            break
        optimizer = inner
    return optimizer


def inspect(model: Any, optimizer: Any = None, accelerator: Any = None, expect_fp8: bool = True,
            *, engine: Any = None, ds_config: Any = None, backend: str | None = None,
            fail_on: str = "error", rules_paths: Sequence[str] = (),
            extra_facts: Mapping[str, Any] | None = None, max_listed: int = 64) -> Report:
    """Inspect live training objects and evaluate the runtime rules (``FP8D-RT-*``) over them.

    ``engine`` is a DeepSpeed engine (found on ``model`` or ``accelerator`` when not given);
    ``ds_config`` is the DeepSpeed config (dict or JSON path) the job meant to use, to compare the
    configured ZeRO stage with the one the engine runs. ``extra_facts`` are ``runtime.*`` facts
    only a framework callback knows (Lightning's precision setting). Never raises for findings: use
    ``report.ok()`` or :func:`preflight.assert_ready`-style handling (see integrations).
    """
    from preflight import engine as rules_engine
    from preflight.api import evaluate_facts

    if model is None or not callable(getattr(model, "named_modules", None)):
        raise TypeError("preflight.inspect(model, ...) needs a torch.nn.Module (the model after "
                        f"accelerator.prepare / deepspeed.initialize), not {type(model).__name__}")
    facts = runtime_facts(model, optimizer, accelerator, expect_fp8, engine=engine,
                          ds_config=ds_config, backend=backend, max_listed=max_listed)
    if extra_facts:
        facts = facts.merged(dict(extra_facts), source="inspect")
    # Only the runtime rules by default: host / package / config facts were not collected here,
    # and rules that test those for absence must not fire on an inspection that never looked.
    paths = list(rules_paths) or [str(rules_engine.bundled_rules_dir() / d)
                                  for d in ("runtime", "checkpoint/live")]
    from preflight.environment import live_environment  # packages, env: issue 12

    facts, extra = live_environment(facts)
    return evaluate_facts(facts, rules_paths=paths, fail_on=fail_on, extra=extra,
                          inputs=("live objects: preflight.inspect",))
