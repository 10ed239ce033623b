"""llm-foundry / Composer training YAML: ``${...}`` interpolation resolved, ``fc_type`` normalized.

llm-foundry loads the YAML with OmegaConf, so ``${variables.x}`` (v0.9+) and the older
``${max_seq_len}`` (a top-level key) are resolved before anything reads them; so are they here
(:mod:`.interpolate`, shared with the NeMo reader; bounded, so a reference bomb is a problem).

``model.fc_type`` is a string (``torch`` | ``te``) or, from v0.9, a mapping ``{name: te, <kwargs
for te.Linear>}``. Both give ``config.llmfoundry.model.fc_type = "te"``; the mapping's other keys
go to ``config.llmfoundry.model.fc_type_kwargs.<key>`` and ``config.llmfoundry.model.
fc_type_is_mapping = true`` records the form (rules about the mapping form need it). The
mapping's own ``fc_type.<key>`` facts are not emitted, so there is one name per meaning.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks._claim import owns
from preflight.frameworks._record import Default, Framework
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.interpolate import resolve
from preflight.reading.parse import Parsed, flatten
from preflight.reading.types import ReaderOutput

PREFIX = "config.llmfoundry"
KIND = "llmfoundry"


OWN_KEYS = frozenset({
    "train_loader", "eval_loader", "max_duration", "global_train_batch_size",
    "device_train_microbatch_size", "device_eval_batch_size", "eval_first", "save_folder",
    "icl_tasks", "eval_interval", "max_seq_len"})
"""llm-foundry train.py config keys (llmfoundry/utils/config_utils.py TrainConfig) that claim a
file (``variables``, ``model``, ``fsdp_config`` are other trainers' too); an ``amp_*``
``precision`` (Composer's) claims it as well."""


def score(data: Any) -> int:
    """How strongly a parsed mapping looks like an llm-foundry training YAML."""
    top = {str(k) for k in data}
    model = data.get("model")
    if not owns(top, OWN_KEYS) and not str(data.get("precision", "")).startswith("amp_"):
        return 0   # `model: {name: ...}` alone is any trainer's (frameworks/_claim.py)
    s = 3 * len(top & {"train_loader", "eval_loader", "max_duration", "variables",
                       "global_train_batch_size", "device_train_microbatch_size",
                       "eval_first", "save_folder", "fsdp_config", "icl_tasks"})
    if isinstance(model, dict) and isinstance(model.get("name"), str):
        s += 2
    if str(data.get("precision", "")).startswith("amp_"):
        s += 3
    if isinstance(data.get("fsdp_config"), dict) and any(
            str(k).startswith("fsdp_") for k in data["fsdp_config"]):
        s -= 3  # that is accelerate's fsdp_config
    return s


def read(path: str, parsed: Parsed) -> ReaderOutput:
    data = parsed.data if isinstance(parsed.data, dict) else {}
    data = resolve(data, parsed.line_of)
    model = data.get("model")
    fc_type = model.get("fc_type") if isinstance(model, dict) else None
    if isinstance(fc_type, dict):
        data = dict(data)
        data["model"] = dict(model)
        del data["model"]["fc_type"]
    facts, prov = flatten(data, parsed, PREFIX, path)
    if isinstance(fc_type, dict):
        line = parsed.line_of(("model", "fc_type"))
        where = Source(path, line)
        facts[f"{PREFIX}.model.fc_type_is_mapping"] = True
        prov[f"{PREFIX}.model.fc_type_is_mapping"] = where
        if "name" in fc_type:
            facts[f"{PREFIX}.model.fc_type"] = fc_type["name"]
            line = parsed.line_of(("model", "fc_type", "name"))
            prov[f"{PREFIX}.model.fc_type"] = Source(path, line) if line else where
        kwargs = {k: v for k, v in fc_type.items() if k != "name"}
        if kwargs:
            flatten(kwargs, parsed, f"{PREFIX}.model.fc_type_kwargs", path,
                    base=(), facts=facts, prov=prov)
            for k in kwargs:  # lines of the kwargs are under model.fc_type in the file
                line = parsed.line_of(("model", "fc_type", k))
                stem = f"{PREFIX}.model.fc_type_kwargs.{k}"
                for name in [n for n in facts if n == stem or n.startswith(stem + ".")]:
                    prov[name] = Source(path, line) if line else where
    elif fc_type is not None:
        facts[f"{PREFIX}.model.fc_type_is_mapping"] = False
        line = parsed.line_of(("model", "fc_type"))
        prov[f"{PREFIX}.model.fc_type_is_mapping"] = Source(path, line)
    _custom_model(data, parsed, path, facts, prov)
    return ReaderOutput(facts, prov)


# The models llm-foundry registers itself (llmfoundry/models/__init__.py, registry.models);
# any other name is a class registered by the job's own code (``code_paths``), which the
# config does not show.
_OWN_MODELS = frozenset({"mpt_causal_lm", "hf_causal_lm", "hf_t5", "hf_prefix_lm"})


def _custom_model(data: dict[Any, Any], parsed: Parsed, path: str, facts: dict[str, Any],
                  prov: dict[str, Any]) -> None:
    """A model of the job's own code (issue 22 item 5): whether its layers are Transformer
    Engine's is not in the config, so an unset ``fc_type`` / ``ffn_config.ffn_type`` is Unknown
    (rules about it undetermined), not MPT's default."""
    model = data.get("model")
    name = model.get("name") if isinstance(model, dict) else None
    if not isinstance(name, str) or name in _OWN_MODELS:
        return
    code = data.get("code_paths")
    why = (f"model {name!r} is not one of llm-foundry's own models" +
           (" (the job registers it through code_paths)" if code else "") +
           ": whether it builds Transformer Engine layers is in its code, not the config")
    where = Source(path, parsed.line_of(("model", "name")))
    for key in ("model.fc_type", "model.ffn_config.ffn_type"):
        name_ = f"{PREFIX}.{key}"
        if name_ not in facts:
            facts[name_] = Unknown(why)
            prov[name_] = where


def from_llmfoundry(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    m = View(f, "llmfoundry", prov)
    out = IntentOut()
    precision = m.get("precision")
    psrc = m.src("precision", "composer default (amp_bf16)")
    precision = precision if isinstance(precision, str) else "amp_bf16"
    fp8 = precision == "amp_fp8"
    out["fp8"] = (fp8, psrc)
    if fp8:
        out["backend"] = ("te", psrc)
        out["recipe"] = ("delayed", psrc)  # composer builds te.common.recipe.DelayedScaling
        fmt = m.get("precision_config.fp8_format")
        out["format"] = (str(fmt).lower() if isinstance(fmt, str) else "hybrid",
                         m.src("precision_config.fp8_format", psrc))
        mapping = not m.has("precision_config.fp8_format") and \
            m.any_prefix("precision_config.fp8_format")
        if (fmt is not None and not isinstance(fmt, str)) or mapping:
            # a list or mapping where composer wants a Format name: no default applies
            out["format"] = (Unknown("precision_config.fp8_format is not a format name"),
                             m.src("precision_config.fp8_format", psrc))
        out["precision"] = ("bf16", psrc)
    else:
        out["precision"] = ({"amp_bf16": "bf16", "amp_fp16": "fp16", "fp32": "fp32"}.get(
            precision, Unknown(f"precision {precision!r}")), psrc)
    # `fsdp_config: null` (or no key) means no FSDP: composer runs DDP, and llm-foundry < 0.9
    # crashes on the None (FP8D-LLMF-0003). Any sub-key or a mapping means FSDP.
    fsdp = m.get("fsdp_config")
    if isinstance(fsdp, dict) or (m.any_prefix("fsdp_config") and not m.has("fsdp_config")):
        out["distributed"] = ("fsdp1", m.src("fsdp_config", psrc))
        out["activation_checkpointing"] = (m.truthy("fsdp_config.activation_checkpointing"),
                                           m.src("fsdp_config.activation_checkpointing",
                                                 "composer default (false)"))
    else:
        out["distributed"] = ("ddp", "no fsdp_config: composer uses DDP across ranks")
        out["activation_checkpointing"] = (False, "no fsdp_config")
    out["compile"] = (m.any_prefix("compile_config"), m.src("compile_config", "no compile_config"))
    d_model = m.int("model.d_model")
    if d_model:
        out["shapes.hidden"] = (d_model, m.src("model.d_model"))
        ffn = m.int("model.ffn_config.ffn_hidden_size")
        if ffn:
            out["shapes.ffn"] = (ffn, m.src("model.ffn_config.ffn_hidden_size"))
        else:
            ratio = m.get("model.expansion_ratio", 4)
            if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and \
                    math.isfinite(ratio) and ratio > 0:
                out["shapes.ffn"] = (int(d_model * ratio), m.src("model.expansion_ratio",
                                                                 m.src("model.d_model")))
    seq = m.int("model.max_seq_len") or m.int("max_seq_len")
    mb = m.int("device_train_microbatch_size")
    if seq and mb:
        out["shapes.tokens"] = (seq * mb, m.src("device_train_microbatch_size"))
    return out.build()



FRAMEWORK = Framework(
    kind=KIND, title="llm-foundry (Composer)", formats=("yaml",), score=score, read=read,
    derive=from_llmfoundry, precedence=5,
    distributions=("llm-foundry",), requires=("mosaicml",), rule_area="LLMF",
    area_title="llm-foundry",
    shape_keys=(("heads", ("model.n_heads",)), ("kv_heads", ("model.attn_config.kv_n_heads",)),
                ("layers", ("model.n_layers",)), ("vocab", ("model.vocab_size",)),
                ("seq", ("max_seq_len",)), ("micro_batch", ("device_train_microbatch_size",))),
    # OmegaConf's YAML loader refuses a key given twice ("found duplicate key"; omry/omegaconf
    # 0019bcaca49e, omegaconf/_utils.py get_yaml_loader), so the job would not start.
    duplicate_keys="error",
    defaults=(
        Default("precision", "amp_bf16", "all", "composer Trainer(precision=None)"),
        Default("fsdp_config", "DDP across ranks", "all", "llmfoundry/command_utils/train.py"),
    ),
)
