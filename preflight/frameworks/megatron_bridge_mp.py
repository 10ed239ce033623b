"""Megatron-Bridge's mixed precision as a job states it: the ``MixedPrecisionConfig`` fields
that decide FP8 (a preset named on the launch line, in the YAML or the script; the recipe's own
source in the job; the recipe table of the installed release) and whether attention runs in FP8.

Split out of :mod:`.megatron_bridge` (which reads the launch lines and derives the intent) so
each stays under the module size limit; the sources are cited where each value is decided.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import megatron_bridge_presets as presets
from preflight.frameworks._view import View
from preflight.reading.overridelaunch import base_unread

KIND = "megatron_bridge"
PREFIX = f"config.{KIND}"
_ATTENTION = ("fp8_dot_product_attention", "fp8_multi_head_attention")
_MP_FIELDS = ("precision", "fp8", "fp8_recipe", "fp8_param_gather", "fp4",
              "first_last_layers_bf16")


def mixed_precision(v: View) -> tuple[dict[str, Any], dict[str, str]]:
    """The MixedPrecisionConfig fields that decide FP8 (a value, or Unknown with the reason)
    and where each was decided."""
    name = v.facts.get(f"{PREFIX}.mixed_precision")
    recipe = v.get("recipe")
    unread = base_unread(v.facts, KIND)
    if name is None and unread is not None:
        name = unread        # the --config-file YAML was not read: it may set mixed_precision
    values: dict[str, Any]
    where: dict[str, str]
    if isinstance(name, str):
        got = presets.preset(name)
        src = v.src("mixed_precision")
        if got is None:
            values = {k: Unknown(f"mixed_precision={name!r} is no Megatron-Bridge preset "
                                 "(get_mixed_precision_config raises ValueError)")
                      for k in _MP_FIELDS}
        else:
            values = dict(got)
        where = {k: src for k in _MP_FIELDS}
    elif isinstance(name, Unknown):
        values = {k: name for k in _MP_FIELDS}
        where = {k: v.src("mixed_precision") for k in _MP_FIELDS}
    elif isinstance(own := v.get("recipe_preset"), str) and (got := presets.preset(own)):
        values = dict(got)
        where = {k: f"{v.src('recipe_preset')} (recipe {recipe} in the job's Megatron-Bridge "
                    "source)" for k in _MP_FIELDS}
    elif isinstance(recipe, str) and isinstance(
            hit := presets.for_recipe(recipe, v.facts.get("pkg.megatron-bridge.version")), str):
        values = {k: Unknown(hit + "; set mixed_precision=<preset> on the launch line to "
                             "decide it") for k in _MP_FIELDS}
        where = {k: v.src("recipe", "Megatron-Bridge recipe") for k in _MP_FIELDS}
    elif isinstance(recipe, str) and isinstance(hit, tuple):
        values = hit[0]
        src = f"{v.src('recipe')} ({hit[1]})"
        where = {k: src for k in _MP_FIELDS}
    else:
        why = (f"the recipe {recipe!r} is not one of Megatron-Bridge's "
               f"({', '.join(presets.releases())}): its "
               "mixed_precision is set in Python, not read here" if isinstance(recipe, str)
               else "the recipe (Python) sets mixed_precision, which is not read here")
        values = {k: Unknown(why + "; set mixed_precision=<preset> on the launch line to "
                             "decide it") for k in _MP_FIELDS}
        where = {k: v.src("recipe", "Megatron-Bridge recipe") for k in _MP_FIELDS}
    for key in _ATTENTION:      # the recipe's body in the job's own Megatron-Bridge source,
        if name is None and v.has(f"recipe_{key}"):     # unless a preset replaces its own
            values[key], where[key] = v.facts[f"{PREFIX}.recipe_{key}"], v.src(f"recipe_{key}")
    for key in ("fp8", "fp8_recipe", "fp8_param_gather", "fp4", "first_last_layers_bf16"):
        if v.has(f"mixed_precision.{key}"):
            values[key] = v.facts.get(f"{PREFIX}.mixed_precision.{key}")
            where[key] = v.src(f"mixed_precision.{key}")
    for key, prec in (("bf16", "bf16"), ("fp16", "fp16")):
        if v.truthy(f"mixed_precision.{key}"):
            values["precision"], where["precision"] = prec, v.src(f"mixed_precision.{key}")
    return values, where


def attention(v: View, values: Mapping[str, Any], where: Mapping[str, str]) -> tuple[Any, str]:
    """Whether attention runs in FP8, as the precision config decides it: MixedPrecisionConfig's
    ``fp8_dot_product_attention`` / ``fp8_multi_head_attention`` (False unless set: no preset
    sets them, training/mixed_precision.py l.58-59 @ v0.6.0) are copied onto the model at
    start-up like every other field (``update_config_with_precision_overrides``), so
    ``model.fp8_dot_product_attention=true`` alone is replaced. Set on the launch line, in the
    YAML or the script (``mixed_precision.x``), or in the recipe's body (its source in the job,
    :func:`.megatron_bridge_source.recipe_attention`, or the recipe table's release)."""
    model = [f"model.{k}" for k in _ATTENTION if v.truthy(f"model.{k}")]
    note = (f"; {model[0]} ({v.src(model[0])}) is replaced by mixed_precision at start-up "
            "(training/mixed_precision.py update_config_with_precision_overrides)"
            if model else "")
    got: list[tuple[Any, str]] = []
    for key in _ATTENTION:
        if v.has(f"mixed_precision.{key}"):
            raw = v.facts.get(f"{PREFIX}.mixed_precision.{key}")
            got.append((raw if isinstance(raw, Unknown) else
                        v.truthy(f"mixed_precision.{key}"), v.src(f"mixed_precision.{key}")))
        elif key in values:             # the recipe's body sets it
            got.append((values[key], where.get(key, where["fp8"])))
        elif key == _ATTENTION[0] and v.has("perf.compute_dtype") and (values["fp8"] or
                                                                        values["fp4"]):
            # the flat performance recipe the launcher picks sets it for some models and GPUs
            # (perf_recipes/qwen/common.py l.55, gpt_oss/common.py l.44 @ v0.6.0; utils.py
            # l.670 carries it into the run; none sets fp8_multi_head_attention): which recipe
            # is the launcher's choice
            got.append((Unknown(f"the performance launcher's flat recipe may set mixed_precision"
                                f".{key} (perf_recipes/*/common.py @ v0.6.0); which recipe runs "
                                "is chosen from -m/-mr/-g/-c at run time"),
                        v.src("perf.compute_dtype")))
        elif isinstance(values["fp8"], Unknown):     # the recipe's precision is not known
            got.append((Unknown(values["fp8"].reason.split("; set mixed_precision")[0] +
                                f", and with it mixed_precision.{key}"), where["fp8"]))
        else:
            got.append((False, where["fp8"]))
    on = next((g for g in got if g[0] is True), None)
    if on is not None:
        return on
    unknown = next((g for g in got if isinstance(g[0], Unknown)), None)
    if unknown is not None:
        return unknown
    return False, got[0][1] + note
