"""Primus experiments whose trainer module runs TorchTitan or Megatron-Bridge, read at
AMD-AGI/Primus v26.5.1 (commit 9a86ba8c); MaxText (JAX) is out of scope and said so.

**TorchTitan** (``framework: torchtitan``): the module preset (``pre_trainer.yaml``, extending
``quantize.yaml``) and the model preset (``llama3.1_8B-fp8.yaml``: ``model.converters``) are
composed as for Megatron (primus/core/launcher/parser.py ``parse_trainer_module``: the model
preset adds only the top-level sections the module preset lacks, then the experiment's
``overrides`` are deep-merged), section by section, and stated as TorchTitan's own settings
(``config.torchtitan.<section>.<key>``, with ``config.torchtitan.args_of: primus``), so the
torchtitan reader's intent (:func:`.torchtitan.from_torchtitan`) and the TT rules read them. The
FP8 switch is TorchTitan's: a ``quantize.linear.float8`` / ``mx`` converter. Primus's own
converters: ``primus_turbo`` swaps attention for Primus-Turbo's, in FP8 only with
``primus_turbo.enable_attention_float8`` (primus_turbo_extensions/primus_turbo_converter.py
l.34-51); ``primus_turbo_fp8`` / ``turbo_fp8_linear`` install Primus-Turbo's Float8Linear, always
tensorwise (components/quantization/float8.py l.59-79, patches/turbo/fp8_linear_patches.py
l.49). TorchTitan's registry keeps torchao's converter under ``quantize.linear.float8``
(torchtitan 73a0e697, Primus's pin: components/quantization/float8.py l.238): the
``use_turbo_float8_linear`` patch swaps only the module attribute and the new name.

**Megatron-Bridge** (``framework: megatron_bridge``): the settings are flat keyword arguments
of the recipe function ``flavor`` (backends/megatron_bridge/config_utils.py
``load_recipe_config``: ``auto_filter_and_call``, then ``_merge_dict_to_dataclass``). FP8 is the
recipe's ``precision_config`` (a Megatron-Bridge mixed-precision preset name, or one Primus's own
recipes register), or a ``mixed_precision`` preset name merged over it; neither given, the
recipe's default at Megatron-Bridge 9577b128 (Primus's pin) decides, not read here: Unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import megatron_bridge_presets as bridge_presets
from preflight.frameworks import primus_presets as presets
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.frameworks.torchtitan import converter_names, from_torchtitan
from preflight.reading.parse import Parsed
from preflight.reading.parsefacts import MAX_FACTS_PER_FILE
from preflight.reading.types import cut_short

KIND = "primus"
TT = "config.torchtitan"
MB = "config.megatron_bridge"
READ = ("megatron", "torchtitan", "megatron_bridge")
# converters Primus registers (names -> what they do); the rest are torchtitan's or a fork's
_TURBO_FP8 = ("primus_turbo_fp8", "turbo_fp8_linear")
_PRIMUS_CONVERTERS = frozenset({"primus_turbo", *_TURBO_FP8})
# mixed-precision presets Primus's own recipes register (recipes/mlperf_llama2_70b/
# llama2_custom.py l.218-250): the fields that decide FP8 / FP4
_PRIMUS_MP: dict[str, dict[str, Any]] = {
    "bf16_with_fp8_hybrid": {"precision": "bf16", "fp8": "hybrid", "fp8_recipe": "delayed",
                             "fp8_param_gather": True, "fp4": None},
    "bf16_with_mxfp4_mixed": {"precision": "bf16", "fp8": None, "fp8_recipe": "delayed",
                              "fp8_param_gather": False, "fp4": "e2m1", "fp4_recipe": "mxfp4"},
}
_MP_SOURCE = f"{presets.REPO}/primus/backends/megatron_bridge/recipes/mlperf_llama2_70b/" \
             "llama2_custom.py#L218-L250"
# the recipe keyword arguments whose ConfigContainer field the Megatron-Bridge facts name
_BRIDGE_KEYS = {"tensor_model_parallel_size": "model.tensor_model_parallel_size",
                "context_parallel_size": "model.context_parallel_size",
                "expert_model_parallel_size": "model.expert_model_parallel_size",
                "sequence_parallel": "model.sequence_parallel",
                "micro_batch_size": "train.micro_batch_size", "seq_length": "model.seq_length"}


def read_backend(path: str, parsed: Parsed, module: dict[str, Any], at: tuple[str, ...],
                 root: str | None, own: Mapping[str, Any]) -> tuple[
                     dict[str, Any], dict[str, str], list[tuple[str, int | None, str]]]:
    """Facts and provenance of a TorchTitan / Megatron-Bridge trainer module (``own``: the
    module's framework, config and model as read), and the problems met."""
    framework = own.get("framework")
    where = Source(path, parsed.line_of(at))
    nested = framework == "torchtitan"
    chain = presets.Chain(root, nested=nested)
    config, model = own.get("config"), own.get("model")
    values: dict[str, tuple[Any, str]] = {}
    facts: dict[str, Any] = {}
    prov: dict[str, str] = {}
    prefix = TT if nested else f"config.{KIND}.args"
    got = chain.preset(f"modules/{framework}/{presets.yaml_name(config)}") \
        if isinstance(config, str) else None
    if got is None:
        facts[f"{prefix}.base_config"] = config if isinstance(config, Unknown) else Unknown(
            f"the Primus module preset {str(config)[:80]!r} is neither in the job nor one whose "
            f"settings are known here (Primus {presets.TAG})")
        prov[f"{prefix}.base_config"] = where
    else:
        values.update(got)
    preset = chain.preset(f"models/{framework}/{presets.yaml_name(model)}") \
        if isinstance(model, str) else None
    if preset is None:
        gone = model if isinstance(model, Unknown) else Unknown(
            f"the Primus model preset {str(model)[:80]!r} is neither in the job nor one whose "
            f"settings are known here (Primus {presets.TAG})")
        preset = {k: (gone, where) for k in (("model.converters",) if nested
                                             else ("recipe", "flavor"))}
    tops = {k.split(".", 1)[0] for k in values}
    values.update({k: v for k, v in preset.items() if k.split(".", 1)[0] not in tops})
    overrides = module.get("overrides")
    if isinstance(overrides, dict):
        presets.deep_update(values, presets.file_values(
            path, overrides, parsed.line_of, at + ("overrides",), nested=nested))
    for key, (value, src) in values.items():
        if len(facts) >= MAX_FACTS_PER_FILE:
            cut_short(facts, prov, f"{prefix}.{key}", src)
            break
        facts[f"{prefix}.{key}"], prov[f"{prefix}.{key}"] = value, src
    if not nested:
        # the preset name, as the Megatron-Bridge reader states it: mixed_precision merged
        # over the recipe's precision_config (a str field over a str)
        named = next((values[k] for k in ("mixed_precision", "precision_config")
                      if k in values and isinstance(values[k][0], (str, Unknown))), None)
        if named is not None:
            facts[f"{MB}.mixed_precision"], prov[f"{MB}.mixed_precision"] = named
        for key, name in _BRIDGE_KEYS.items():
            if key in values and values[key][0] is not None:
                facts[f"{MB}.{name}"], prov[f"{MB}.{name}"] = values[key]
    args_of = TT if nested else MB
    facts[f"{args_of}.args_of"], prov[f"{args_of}.args_of"] = KIND, where
    if chain.out.pinned_files:
        facts[f"config.{KIND}.pinned_presets"] = sorted(set(chain.out.pinned_files))
        prov[f"config.{KIND}.pinned_presets"] = presets.REPO
    return facts, prov, chain.out.problems


def derive_torchtitan(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    """TorchTitan's intent over Primus's settings, Primus's own converters read for what they
    do (not as a fork's unknown converter)."""
    t = View(f, "torchtitan", prov)
    raw = f.get(f"{TT}.model.converters")
    names = converter_names(raw)
    facts = dict(f)
    if isinstance(raw, (list, str)):
        facts[f"{TT}.model.converters"] = [n for n in names if n not in _PRIMUS_CONVERTERS]
    derived = from_torchtitan(facts, prov)
    values = dict(derived.values)
    turbo = next((n for n in names if n in _TURBO_FP8), None)
    if turbo is not None:
        src = t.src("model.converters")
        values["fp8"] = (True, src)
        values["recipe"] = ("tensorwise", f"{src} ({turbo}: Primus-Turbo's Float8Linear, "
                            "Float8QuantConfig(granularity=TENSORWISE), "
                            f"{presets.REPO}/primus/backends/torchtitan/components/quantization/"
                            "float8.py#L59-L62)")
        values.pop("backend", None)      # Primus-Turbo's kernels: neither TE nor torchao
        values["precision"] = ("bf16", src)
    if t.truthy("primus_turbo.enable_primus_turbo") and \
            t.truthy("primus_turbo.enable_attention_float8"):
        # ModelConvertersContainer appends the primus_turbo converter whenever Primus-Turbo is
        # on (backends/torchtitan/protocols/model_converter.py l.13-21): TurboAttention with a
        # blockwise FP8 config
        values["fp8_attention"] = (True, t.src("primus_turbo.enable_attention_float8"))
    return replace(derived, values=MappingProxyType(values), runs_on=("torchtitan",))


def derive_bridge(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    """Megatron-Bridge's FP8 fields from the recipe's ``precision_config`` (or a
    ``mixed_precision`` preset name merged over it)."""
    a = View(f, f"{KIND}.args", prov)
    out = IntentOut()
    out.runs_on = ("megatron_bridge",)
    out["distributed"] = ("megatron", a.src("flavor", "Primus Megatron-Bridge backend"))
    key = next((k for k in ("mixed_precision", "precision_config")
                if isinstance(a.get(k), str) or a.unknown(k)), None)
    name = f.get(f"config.{KIND}.args.{key}") if key else None
    broken = a.unknown("base_config") or a.unknown("flavor")
    given = next((k for k in ("mixed_precision", "precision_config") if a.has(k)
                  and a.get(k) is not None), None)
    if key is None and given is not None:
        # a mapping: merged field by field over what the recipe built, whose type decides
        # (config_utils.py _merge_dict_to_dataclass skips a dict over a preset name)
        out["fp8"] = (Unknown(f"{given} is given as a mapping: what it leaves of the recipe's "
                              "own mixed precision is not known here"), a.src(given))
        return out.build()
    if key is None or isinstance(name, Unknown):
        out["fp8"] = (name if isinstance(name, Unknown) else broken or Unknown(
            "the experiment gives no precision_config: the recipe "
            f"{str(a.get('flavor'))[:60]!r}'s default at Megatron-Bridge 9577b128 (Primus "
            f"{presets.TAG}'s pin) decides it, not read here"), a.src(key or "flavor"))
        return out.build()
    src = a.src(key)
    text = str(name).strip().replace("-", "_")
    mp = bridge_presets.preset(text) or _PRIMUS_MP.get(text)
    if mp is None:
        out["fp8"] = (Unknown(f"{key}={text[:60]!r} is neither a Megatron-Bridge preset nor "
                              "one Primus's recipes register: its settings are not known here"),
                      src)
        return out.build()
    if text in _PRIMUS_MP:
        src = f"{src} ({_MP_SOURCE})"
    fmt, fp4 = mp.get("fp8"), mp.get("fp4")
    out["fp8"] = (bool(fmt or fp4), src)
    out["precision"] = (mp["precision"], src)
    if fmt:
        out["backend"] = ("te", src)
        out["format"] = (str(fmt).lower(), src)
        out["recipe"] = (mp["fp8_recipe"], src)
        out["fp8_params"] = (mp["fp8_param_gather"], src)
    elif fp4:
        out["backend"] = ("te", src)
        out["recipe"] = (mp.get("fp4_recipe", "nvfp4"), src)
    tp = a.int("tensor_model_parallel_size")
    if tp:
        out["tp"] = (tp, a.src("tensor_model_parallel_size"))
    if a.int("seq_length"):
        out["seq_len"] = (a.int("seq_length"), a.src("seq_length"))
    if a.int("micro_batch_size"):
        out["micro_batch"] = (a.int("micro_batch_size"), a.src("micro_batch_size"))
    return out.build()


def not_read(framework: Any, where: str) -> tuple[Unknown, str]:
    """Why a backend other than :data:`READ` leaves FP8 undecided."""
    if framework == "maxtext":
        return (Unknown("Primus backend 'maxtext' trains with JAX MaxText: out of this tool's "
                        "scope (PyTorch FP8 only), its FP8 settings are not read"), where)
    return (Unknown(f"Primus backend {str(framework)[:40]!r}: only its Megatron, TorchTitan and "
                    "Megatron-Bridge backends are read here"), where)
