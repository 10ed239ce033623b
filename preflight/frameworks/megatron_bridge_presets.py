"""Megatron-Bridge's mixed-precision presets, as data, with where they were read.

``src/megatron/bridge/training/mixed_precision.py`` at v0.6.0 (NVIDIA-NeMo/Megatron-Bridge,
commit 51885cf132b2814188b6855c25a8588254274c2a) registers each preset by its function name,
also with ``-`` for ``_`` (``get_mixed_precision_config`` turns ``-`` back into ``_``). Only the
fields that decide FP8 are kept: ``fp8`` (format), ``fp8_recipe``, ``fp8_param_gather``,
``fp4``, the compute precision, and whether the first/last layers stay in BF16. Fields a preset
does not set keep the ``MixedPrecisionConfig`` defaults (``fp8=None``, ``fp8_recipe=
"tensorwise"``, ``fp8_param_gather=False``).

Benchmark recipe names carry their precision (``scripts/training/recipe_metadata.py``
``BENCHMARK_RECIPE_PATTERN``: ``_<task>_<n>gpu_<hardware>_<bf16|fp8cs|fp8mx|fp8sc|nvfp4>``):
``perf_recipes/_common.py`` ``_perf_precision`` maps ``fp8_cs`` to the current-scaling preset
with ``first_last_layers_bf16 = False``, ``fp8_mx`` to MXFP8, ``nvfp4`` to NVFP4, and the
benchmark recipes named ``fp8sc`` use the subchannel (blockwise) preset.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

SOURCE = ("Megatron-Bridge v0.6.0 src/megatron/bridge/training/mixed_precision.py "
          "(commit 51885cf1)")

_BF16: dict[str, Any] = {"precision": "bf16", "fp8": None, "fp8_recipe": "tensorwise",
                         "fp8_param_gather": False, "fp4": None, "first_last_layers_bf16": False}
_FP16 = {**_BF16, "precision": "fp16"}

PRESETS: dict[str, dict[str, Any]] = {
    "bf16_mixed": dict(_BF16),
    "fp16_mixed": dict(_FP16),
    "bf16_with_fp8_delayed_scaling_mixed": {**_BF16, "fp8": "hybrid", "fp8_recipe": "delayed",
                                            "fp8_param_gather": True},
    "fp16_with_fp8_delayed_scaling_mixed": {**_FP16, "fp8": "hybrid", "fp8_recipe": "delayed",
                                            "fp8_param_gather": True},
    "bf16_with_mxfp8_mixed": {**_BF16, "fp8": "e4m3", "fp8_recipe": "mxfp8",
                              "fp8_param_gather": True},
    "fp16_with_mxfp8_mixed": {**_FP16, "fp8": "e4m3", "fp8_recipe": "mxfp8",
                              "fp8_param_gather": True},
    "bf16_with_fp8_current_scaling_mixed": {**_BF16, "fp8": "hybrid", "fp8_recipe": "tensorwise",
                                            "fp8_param_gather": True,
                                            "first_last_layers_bf16": True},
    "nemotron_h_bf16_with_fp8_current_scaling_mixed": {
        **_BF16, "fp8": "hybrid", "fp8_recipe": "tensorwise", "fp8_param_gather": True,
        "first_last_layers_bf16": True},
    # sic: the "current scaling" name upstream sets the blockwise recipe
    "nanov2_bf16_with_fp8_current_scaling_mixed": {
        **_BF16, "fp8": "hybrid", "fp8_recipe": "blockwise", "fp8_param_gather": True,
        "first_last_layers_bf16": True},
    "fp16_with_fp8_current_scaling_mixed": {**_FP16, "fp8": "hybrid", "fp8_recipe": "tensorwise",
                                            "fp8_param_gather": True,
                                            "first_last_layers_bf16": True},
    "bf16_with_fp8_subchannel_scaling_mixed": {**_BF16, "fp8": "hybrid",
                                               "fp8_recipe": "blockwise"},
    "fp16_with_fp8_subchannel_scaling_mixed": {**_FP16, "fp8": "hybrid",
                                               "fp8_recipe": "blockwise"},
    "bf16_with_nvfp4_mixed": {**_BF16, "fp4": "e2m1", "fp4_recipe": "nvfp4"},
    "nemotron_3_super_bf16_with_nvfp4_mixed": {**_BF16, "fp4": "e2m1", "fp4_recipe": "nvfp4",
                                               "first_last_layers_bf16": True},
}

BENCHMARK = re.compile(r"_(?:pretrain|sft|peft)_[1-9]\d*gpu_[a-z0-9]+_"
                       r"(?P<precision>bf16|fp8cs|fp8mx|fp8sc|nvfp4)(?:_[a-z0-9_]+)?_config$")
BENCHMARK_SOURCE = ("Megatron-Bridge v0.6.0 scripts/training/recipe_metadata.py "
                    "BENCHMARK_RECIPE_PATTERN and perf_recipes/_common.py _perf_precision")
_BY_TOKEN = {
    "bf16": dict(_BF16),
    "fp8cs": {**PRESETS["bf16_with_fp8_current_scaling_mixed"], "first_last_layers_bf16": False},
    "fp8mx": dict(PRESETS["bf16_with_mxfp8_mixed"]),
    "fp8sc": dict(PRESETS["bf16_with_fp8_subchannel_scaling_mixed"]),
    "nvfp4": dict(PRESETS["bf16_with_nvfp4_mixed"]),
}


def preset(name: str) -> dict[str, Any] | None:
    """The preset ``name`` (``-`` or ``_``), or None when Megatron-Bridge has none by that name
    (``get_mixed_precision_config`` raises ValueError: the job stops)."""
    return PRESETS.get(name.strip().replace("-", "_"))


def from_recipe_name(name: str) -> tuple[str, dict[str, Any]] | None:
    """(precision token, preset) a benchmark recipe's name states, e.g. ``..._h100_fp8cs_config``."""
    m = BENCHMARK.search(name)
    if not m:
        return None
    return m.group("precision"), dict(_BY_TOKEN[m.group("precision")])


@lru_cache(maxsize=1)
def _recipes() -> dict[str, Any]:
    """``preflight/data/megatron_bridge_recipes.json``: which preset each recipe of a release
    ends up with (generated by tools/megatron_bridge_recipes.py); empty when unreadable."""
    try:
        text = resources.files("preflight").joinpath(
            "data/megatron_bridge_recipes.json").read_text("utf-8")
        doc = json.loads(text)
        return {"version": str(doc["version"]), "commit": str(doc["commit"]),
                "fp8": dict(doc["fp8"]), "bf16": frozenset(doc["bf16"])}
    except (OSError, ValueError, KeyError, TypeError):
        return {"version": "?", "commit": "?", "fp8": {}, "bf16": frozenset()}


def for_recipe(name: str) -> tuple[dict[str, Any], str] | None:
    """The preset recipe ``name`` ends up with and why: the table generated from the recipes'
    source, else what a benchmark recipe's name states; None for a name neither knows."""
    table = _recipes()
    where = f"Megatron-Bridge {table['version']} recipe {name} (commit {table['commit'][:8]})"
    if name in table["fp8"]:
        key, _, recipe = table["fp8"][name].partition(":")
        got = dict(_BY_TOKEN["fp8cs"]) if key == "fp8cs" else dict(PRESETS[key])
        if recipe:
            got["fp8_recipe"] = recipe
        return got, f"{where}: {table['fp8'][name]}"
    if name in table["bf16"]:
        return dict(_BF16), f"{where}: bf16_mixed"
    hit = from_recipe_name(name)
    if hit is not None:
        return hit[1], f"recipe name ({hit[0]}; {BENCHMARK_SOURCE})"
    return None
