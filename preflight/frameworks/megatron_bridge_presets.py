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
def _recipes() -> tuple[dict[str, Any], ...]:
    """``preflight/data/megatron_bridge_recipes.json``: for each release it covers, which preset
    each recipe ends up with (generated by tools/megatron_bridge_recipes.py); none when
    unreadable."""
    try:
        text = resources.files("preflight").joinpath(
            "data/megatron_bridge_recipes.json").read_text("utf-8")
        return tuple({"version": str(r["version"]), "commit": str(r["commit"]),
                      "fp8": dict(r["fp8"]), "bf16": frozenset(r["bf16"]),
                      "fp8_attention": frozenset(r.get("fp8_attention", ()))}
                     for r in json.loads(text)["releases"])
    except (OSError, ValueError, KeyError, TypeError):
        return ()


def _minor(version: str) -> tuple[int, ...] | None:
    m = re.match(r"v?(\d+)\.(\d+)", version.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def _in_table(table: dict[str, Any], name: str) -> tuple[dict[str, Any], str] | None:
    """The preset recipe ``name`` ends up with in one release's table, and that table's entry."""
    if name in table["fp8"]:
        key, _, recipe = table["fp8"][name].partition(":")
        got = dict(_BY_TOKEN["fp8cs"]) if key == "fp8cs" else dict(PRESETS[key])
        if recipe:
            got["fp8_recipe"] = recipe
        if name in table["fp8_attention"]:     # its body turns FP8 attention on
            got["fp8_dot_product_attention"] = True
        return got, str(table["fp8"][name])
    if name in table["bf16"]:
        return dict(_BF16), "bf16_mixed"
    return None


def releases() -> tuple[str, ...]:
    """The Megatron-Bridge releases the recipe table covers."""
    return tuple(t["version"] for t in _recipes())


def for_recipe(name: str, version: Any = None) -> tuple[dict[str, Any], str] | str | None:
    """The preset recipe ``name`` ends up with and why, for Megatron-Bridge ``version`` (the
    one installed; None or Unknown when not known): the table of that release (same major.minor);
    for a version not known, or a release without that recipe (another copy runs it), the one
    preset every release's table that has the recipe agrees on; else what a
    benchmark recipe's name states; a str (why it cannot be told) where the releases differ or
    the version has no table; None for a name nobody knows. A recipe's preset changes between
    releases (nemotron_3_super_pretrain_config: NVFP4 at v0.4.0/v0.5.0, BF16 at v0.6.0; holdout8)."""
    tables = _recipes()
    known = version if isinstance(version, str) and _minor(version) else None
    mine = [t for t in tables if known is not None and _minor(t["version"]) == _minor(known)]
    # the release itself where its table is here, else its series' last one read (0.2.0rc5,
    # a clone of main between tags, reads as v0.2.2: the 0.2.x tables agree on every FP8 entry)
    mine.sort(key=lambda t: t["version"].lstrip("v") == str(known).strip().lstrip("v"))
    if mine and (hit := _in_table(mine[-1], name)) is not None:
        t = mine[-1]
        series = "" if t["version"].lstrip("v") == str(known).strip().lstrip("v") else \
            f"; the {'.'.join(map(str, _minor(t['version']) or ()))} series' table for {known}"
        return hit[0], (f"Megatron-Bridge {t['version']} recipe {name} "
                        f"(commit {t['commit'][:8]}): {hit[1]}{series}")
    if known is None or mine:
        # version not known, or its release has no such recipe (so another copy of
        # Megatron-Bridge runs it, a container's): what every release that has it says
        found = [(t, h) for t in tables if (h := _in_table(t, name)) is not None]
        entries = {h[1] for _, h in found}
        note = f"not in {mine[-1]['version']}'s recipes; " if mine else ""
        if len(entries) == 1:
            versions = ", ".join(t["version"] for t, _ in found)
            return found[0][1][0], (f"Megatron-Bridge recipe {name}: {note}{found[0][1][1]} in "
                                    f"every release whose recipes were read that has it "
                                    f"({versions})")
        if len(entries) > 1:
            each = "; ".join(f"{t['version']}: {h[1]}" for t, h in found)
            which = (f"the installed {known} has no such recipe" if mine else
                     "the installed version is not known (--assume pkg.megatron-bridge=V)")
            return (f"the recipe {name}'s mixed precision differs between Megatron-Bridge "
                    f"releases ({each}) and {which}")
    named = from_recipe_name(name)
    if named is not None:
        return named[1], f"recipe name ({named[0]}; {BENCHMARK_SOURCE})"
    if known is not None and any(_in_table(t, name) for t in tables):
        return (f"the recipe table covers Megatron-Bridge {', '.join(releases())}, not the "
                f"installed {known}, whose recipe {name} may set another precision")
    return None
