"""DeepSpeed: the ``ds_config.json`` (``"auto"`` stays ``"auto"``; legacy ``bfloat16`` as written).

DeepSpeed opens its config with ``json.load`` only, so JSON is its one format. An ``msamp``
block with ``enabled: true`` is MS-AMP's DeepSpeed integration (``msamp.deepspeed.initialize``)
and asks for FP8.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._claim import owns
from preflight.frameworks._record import Default, Framework
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.readers import read_plain

KIND = "deepspeed"


OWN_KEYS = frozenset({
    "zero_optimization", "train_micro_batch_size_per_gpu", "zero_allow_untested_optimizer",
    "steps_per_print", "wall_clock_breakdown", "bfloat16", "msamp", "flops_profiler",
    "prescale_gradients", "communication_data_type", "comms_logger", "gradient_clipping",
    "data_types"})
"""DeepSpeed config keys (deepspeed/runtime/constants.py) that claim a JSON file; its
``{"enabled": ...}`` ``fp16`` / ``bf16`` blocks claim it too."""


def score(data: Any) -> int:
    """How strongly a parsed mapping looks like a DeepSpeed config."""
    top = {str(k) for k in data}
    if not owns(top, OWN_KEYS) and not any(
            isinstance(data.get(k), dict) and "enabled" in data[k] for k in ("fp16", "bf16")):
        return 0   # `optimizer: {type: ...}` alone is any trainer's (frameworks/_claim.py)
    s = 3 * len(top & {"zero_optimization", "train_micro_batch_size_per_gpu",
                       "zero_allow_untested_optimizer", "steps_per_print",
                       "wall_clock_breakdown", "bfloat16", "msamp", "flops_profiler",
                       "prescale_gradients", "communication_data_type", "comms_logger"})
    s += len(top & {"train_batch_size", "gradient_clipping", "data_types", "amp"})
    for key in ("fp16", "bf16"):
        if isinstance(data.get(key), dict):
            s += 2
    if isinstance(data.get("optimizer"), dict) and "type" in data["optimizer"]:
        s += 2
    return s


def ds_precision(facts: Mapping[str, Any], prov: Mapping[str, str], under_fp8: bool,
                  ) -> tuple[Any, str] | None:
    """Precision DeepSpeed will run with, from its JSON (legacy ``bfloat16`` key included)."""
    ds = View(facts, "deepspeed", prov)
    if not any(n.startswith("config.deepspeed.") for n in facts):
        return None
    fp16 = ds.get("fp16.enabled")
    # "bfloat16" is DeepSpeed's legacy name for the bf16 block (BFLOAT16_OLD in its constants).
    bf16_key = next((k for k in ("bf16.enabled", "bfloat16.enabled") if ds.has(k)),
                    "bf16.enabled")
    bf16 = ds.get(bf16_key)
    if fp16 is True or str(fp16).lower() == "true":
        return "fp16", ds.src("fp16.enabled")
    if bf16 is True or str(bf16).lower() == "true":
        return "bf16", ds.src(bf16_key)
    if under_fp8:
        # accelerate >= 0.34 (DeepSpeedPlugin.set_mixed_precision) fills a missing or "auto" bf16
        # with true for fp8 and leaves an explicit false alone (research ACC-DS-03/04).
        if bf16 is False or str(bf16).lower() == "false":
            return "fp32", ds.src(bf16_key)
        return "bf16", ds.src(bf16_key, "accelerate fills bf16.enabled for fp8")
    if bf16 == "auto" or fp16 == "auto":
        return Unknown("DeepSpeed precision is \"auto\", filled in by the launcher"), ds.src(
            bf16_key if bf16 == "auto" else "fp16.enabled")
    return "fp32", ds.src(bf16_key, "DeepSpeed default (fp32)")


def from_deepspeed(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    d = View(f, "deepspeed", prov)
    out = IntentOut()
    out["distributed"] = ("deepspeed", prov.get("config.files", "config"))
    stage = d.get("zero_optimization.stage")
    if d.int("zero_optimization.stage") is not None:     # 3, or "3" as generated JSON has it
        out["zero_stage"] = (d.int("zero_optimization.stage"), d.src("zero_optimization.stage"))
    elif stage is None:
        out["zero_stage"] = (0, d.src("zero_optimization", "DeepSpeed default (stage 0)"))
    else:
        out["zero_stage"] = (Unknown(f"zero_optimization.stage is {stage!r}"),
                             d.src("zero_optimization.stage"))
    prec = ds_precision(f, prov, under_fp8=False)
    if prec is not None:
        out["precision"] = prec
    if d.truthy("msamp.enabled"):
        # MS-AMP's DeepSpeed integration (msamp.deepspeed.initialize) trains in FP8 from this
        # block; DeepSpeed's own "fp8" block does nothing (research DS-02) and is not read here.
        out["fp8"] = (True, d.src("msamp.enabled"))
        out["backend"] = ("msamp", d.src("msamp.enabled"))
    return out.build()



FRAMEWORK = Framework(
    kind=KIND, title="DeepSpeed", formats=("json",), score=score,
    read=read_plain("config.deepspeed"), derive=from_deepspeed, precedence=4, zero_stage_rank=0,
    distributions=("deepspeed",), rule_area="DS", area_title="DeepSpeed",
    defaults=(
        Default("zero_optimization.stage", "0", "all", "deepspeed/runtime/zero/config.py"),
        Default("bf16.enabled / fp16.enabled", "fp32", "all", "deepspeed/runtime/config.py"),
    ),
)
