"""An HF model's MoE expert count and router top-k (and its checkpoint's ``quant_method``), from
the ``config.json`` of a model folder the job names inside the job (``model_name_or_path`` of
TrainingArguments-style YAML / JSON: HF Trainer, LLaMA-Factory; axolotl's ``base_model``), for
the shared ``intent.moe.experts`` / ``intent.moe.top_k`` that only the Megatron-family readers
filled (FP8D-ACC-0097 needs it for HF models: accelerate's torchao conversion quantizes a Linear
router whose expert count divides by 16; FP8D-ACC-0098: on transformers 5 the experts are no
nn.Linear and stay BF16).

Transformers' configs name the expert count per architecture (the keys its
models/<name>/configuration_<name>.py define and the routers read, e.g. DeepseekV3TopkRouter's
``config.n_routed_experts`` at 00b676f8): ``num_local_experts`` (Mixtral,
GraniteMoE, GPT-OSS, Llama 4's ``text_config``), ``num_experts`` (Qwen2-MoE, Qwen3-MoE, OLMoE),
``n_routed_experts`` (DeepSeek-V2/V3); the router's top-k is ``num_experts_per_tok`` in all of
them. A multimodal config keeps them under ``text_config``. The config's ``model_type`` is kept
beside the count (``model_config_type``): whether the router is an ``nn.Linear`` depends on the
architecture (DeepSeek-V3's and GPT-OSS's routers are bare ``nn.Parameter`` weights).

The folder is found and bounded as :mod:`.ckptconfig` finds a checkpoint (next to the naming
file, the job's roots, the current directory; never outside the job; ``config.json`` read with
:func:`preflight.reading.parse.read_text`: regular file, at most 1 MiB, UTF-8); a
folder outside the job, or a config without an expert key states nothing (the intent keeps its
"not said" Unknown); a hub id (``org/name``) with no folder in the job is looked up in
:mod:`.hfmoe_known` (well-known MoE models), else its count is Unknown naming it; a malformed
value states Unknown with the file and line. Nothing of the folder is imported or run.
"""

from __future__ import annotations

import os
import re
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import hfmoe_known
from preflight.frameworks.ckptconfig import local_folder
from preflight.reading.boundary import refuse
from preflight.reading.parse import ParseError, parse_json, read_text
from preflight.reading.pyfacts import PyOut

MODEL_KEYS = ("model_name_or_path", "base_model")
"""The keys of a TrainingArguments-style file that name the model trained."""
EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")
TOP_K_KEY = "num_experts_per_tok"
EXPERTS = "model_experts"
TOP_K = "model_experts_top_k"
MODEL_TYPE = "model_config_type"
QUANT_METHOD = "model_quant_method"
"""Fact keys under ``config.<kind>``: what the model's config.json says, at its line."""
MAX_EXPERTS = 1 << 16


def read_model(kind: str, path: str, data: Any, facts: dict[str, Any],
               prov: dict[str, str]) -> None:
    """Add ``config.<kind>.model_experts`` (``model_experts_top_k``, ``model_config_type``) and
    ``model_quant_method`` from the config.json of the model folder ``data``'s model key names,
    where that folder lies inside the job."""
    if not isinstance(data, dict):
        return
    model = next((data[k] for k in MODEL_KEYS if isinstance(data.get(k), str)), None)
    if model is None or not model.strip() or "\x00" in model:
        return
    folder, _ = local_folder(model.strip(), path)
    if folder is None and hfmoe_known.hub_id(model.strip()):
        _known(kind, path, data, model.strip(), facts, prov)
        return
    if folder is None or refuse(folder) is not None:
        return
    config = os.path.join(folder, "config.json")
    if not os.path.lexists(config):
        return
    try:
        if refuse(config) is not None:
            return
        parsed = parse_json(read_text(config))
    except ParseError:
        return          # ckptconfig reports a config.json it cannot read where it matters
    _quant_method(kind, config, parsed, facts, prov)
    for section in ((), ("text_config",)):
        block = _block(parsed.data, section)
        key = next((k for k in EXPERT_KEYS if k in block and block[k] is not None), None)
        if key is None:
            continue
        where = f"{config}:{parsed.line_of((*section, key)) or 1}"
        name = ".".join((*section, key))
        facts[f"config.{kind}.{EXPERTS}"] = _count(block[key], name, where, 0)
        prov[f"config.{kind}.{EXPERTS}"] = where
        kind_of = block.get("model_type", parsed.data.get("model_type"))
        if isinstance(kind_of, str):
            # the architecture decides whether the router is an nn.Linear (FP8D-ACC-0097)
            facts[f"config.{kind}.{MODEL_TYPE}"] = kind_of[:80]
            prov[f"config.{kind}.{MODEL_TYPE}"] = where
        if block.get(TOP_K_KEY) is not None:
            top = f"{config}:{parsed.line_of((*section, TOP_K_KEY)) or 1}"
            facts[f"config.{kind}.{TOP_K}"] = _count(block[TOP_K_KEY],
                                                     ".".join((*section, TOP_K_KEY)), top, 1)
            prov[f"config.{kind}.{TOP_K}"] = top
        return


def _known(kind: str, path: str, data: dict[str, Any], model: str, facts: dict[str, Any],
           prov: dict[str, str]) -> None:
    """A hub id with no folder in the job: the table of well-known MoE models
    (:mod:`.hfmoe_known`), else Unknown naming it."""
    where = prov.get(f"config.{kind}.{next(k for k in MODEL_KEYS if k in data)}", path)
    row = hfmoe_known.lookup(model)
    name = f"config.{kind}.{EXPERTS}"
    if row is None:
        facts[name] = Unknown(f"{model[:80]!r} is a hub id whose config.json is not in the job "
                              "(the hub is not asked): its expert count is not known here")
        prov[name] = str(where)
        return
    src = f"{where} ({model}: config.json {row.key} {row.experts}, {row.source})"
    facts[name], prov[name] = row.experts, src
    facts[f"config.{kind}.{TOP_K}"], prov[f"config.{kind}.{TOP_K}"] = row.top_k, src
    facts[f"config.{kind}.{MODEL_TYPE}"], prov[f"config.{kind}.{MODEL_TYPE}"] = \
        row.model_type, src


def _quant_method(kind: str, config: str, parsed: Any, facts: dict[str, Any],
                  prov: dict[str, str]) -> None:
    """``config.<kind>.model_quant_method``: the checkpoint's ``quantization_config.quant_method``
    as written (lower case), where it names one (FP8D-HF-0003: the Trainer refuses to fine-tune a
    checkpoint whose quantizer is not trainable)."""
    qc = _block(parsed.data, ("quantization_config",))
    method = qc.get("quant_method")
    if isinstance(method, str) and method.strip():
        where = f"{config}:{parsed.line_of(('quantization_config', 'quant_method')) or 1}"
        facts[f"config.{kind}.{QUANT_METHOD}"] = method.strip().lower()[:40]
        prov[f"config.{kind}.{QUANT_METHOD}"] = where


def _block(data: Any, section: tuple[str, ...]) -> dict[str, Any]:
    for key in section:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _count(value: Any, name: str, where: str, least: int) -> Any:
    """A plausible count, else Unknown saying what the file holds."""
    if isinstance(value, int) and not isinstance(value, bool) and least <= value <= MAX_EXPERTS:
        return value
    return Unknown(f"{where}: {name} is {str(value)[:40]!r}, not a count of experts")


_LOADED = re.compile(r"^transformers\.(?:\w+\.)*(?:AutoModel\w*|\w+For\w+|\w+Model)\."
                     r"from_pretrained$")


def from_pretrained(out: PyOut, kind: str) -> None:
    """``AutoModelForCausalLM.from_pretrained("org/name")`` (or a folder of the job) in a script:
    the model's expert count as :func:`read_model` finds it, at the call's line. Two models
    loaded (a policy and a reward model) that differ leave it Unknown naming both lines."""
    for call, _ in out.calls():
        if not _LOADED.match(call.func):
            continue
        model = call.args[0] if call.args else call.kwargs.get("pretrained_model_name_or_path")
        if not isinstance(model, str):
            continue
        facts: dict[str, Any] = {}
        prov: dict[str, str] = {f"config.{kind}.model_name_or_path":
                                f"{out.module.path}:{call.line}"}
        read_model(kind, out.module.path, {"model_name_or_path": model}, facts, prov)
        for name, value in facts.items():
            out.put(name, value, call.line)
