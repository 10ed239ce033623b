"""AReaL's engine strings and what its Megatron engine hands Megatron-Core, as Megatron's facts.

Read at inclusionAI/AReaL 4aef98d8 (2026-05; tags v1.0.0 and v0.5.3 for the older layout):

- **Where the engines are named.** Each engine has a ``backend`` string, ``actor.backend:
  megatron:d4p1t1``, ``rollout.backend: sglang:d4p1t1`` (areal/api/cli_args.py:1160-1166,
  2097-2103); before that one ``allocation_mode: sglang:d4p1t1+megatron:d4p1t1`` named them all
  (cli_args.py:2689-2696, now deprecated, the SPMD launchers only). The grammar is
  areal/api/alloc_mode.py:600-640: an inference backend (``sglang`` | ``vllm``) or a training
  one (``fsdp`` | ``megatron`` | ``archon``), an optional ``[name]``, ``:`` and dimensions
  ``d`` / ``p`` / ``t`` / ``c`` / ``e`` with their sizes (``megatron:(attn:d1p12t4|ffn:d1p12e4)``
  for MoE), components joined by ``+`` (``|``: colocated). Bare training dimensions
  (``sglang:d4p1t1+d4p1t1``) were auto-selected up to v1.0.x: Megatron when ``p`` or ``e`` is
  above 1, else FSDP (v1.0.0 alloc_mode.py:929-936); 4aef98d8 refuses them (alloc_mode.py:907).
- **What the Megatron engine hands Megatron-Core** (``actor.megatron``, MegatronEngineConfig,
  cli_args.py:835-930): ``ddp`` is Megatron's own DistributedDataParallelConfig, passed field by
  field (areal/models/mcore/registry.py:255-262, 317-321; with LoRA the distributed optimizer is
  turned off: registry.py:256-259, megatron_engine.py:1276-1280); ``fp8_config``
  (FP8EngineConfig, cli_args.py:730-832) is set on the TransformerConfig as ``mode`` -> ``fp8``
  and every other field with an ``fp8_`` prefix (megatron_engine.py:1154-1186), so ``mode`` is
  Megatron's ``--fp8-format`` and ``recipe`` its ``--fp8-recipe``; ``use_torch_fsdp2`` and
  ``use_custom_fsdp`` are Megatron-FSDP's switches (registry.py:265-266). These are stated as
  ``config.megatron.*`` under the Megatron-LM argument names the Megatron rules read
  (``fp8_format``, ``fp8_recipe``, ``fp8_param_gather``, ``use_distributed_optimizer``, ...),
  with ``config.megatron.validated_args: false`` (Megatron-LM's ``validate_args`` never runs:
  ``megatron_validated.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import megatron_validated as validated

PREFIX = "config.areal"
MEGATRON = "config.megatron"
AT = "AReaL 4aef98d8"
_CLI = f"{AT} areal/api/cli_args.py"
TRAIN = ("fsdp", "megatron", "archon")
INFER = ("sglang", "vllm")
# one component: backend (optional [name]), ':' or the old '.', then its dimensions
_COMPONENT = re.compile(r"^\s*(?:([A-Za-z_]+)\s*(?:\[\s*\w+\s*\])?\s*[:.]\s*)?(.*?)\s*$", re.S)
_DIM = re.compile(r"([dptce])\s*([1-9][0-9]{0,5})")
_DIMS_ONLY = re.compile(r"^(?:\s*[dptce]\s*[1-9][0-9]{0,5})+\s*$")
_BOOLS = frozenset({"fp8_param_gather", "use_distributed_optimizer", "use_torch_fsdp2",
                    "use_megatron_fsdp", "overlap_param_gather",
                    "overlap_param_gather_with_optimizer_step", "first_last_layers_bf16"})
MAX_BACKEND = 400   # characters of an engine string read (AReaL's are a few dozen)


@dataclass(frozen=True)
class Engine:
    """One engine of the job: its backend (or Unknown) and its parallel sizes where plain."""

    backend: Any                    # "megatron" | ... | Unknown
    sizes: Mapping[str, int]        # d/p/t/c/e -> size (empty for the MoE hybrid syntax)
    source: str
    note: str = ""                  # how the backend was decided, when not written


def parse_component(text: str, source: str) -> Engine:
    """One ``backend:dims`` component (``megatron:d4p1t1``, ``sglang[r]:d2``, ``d4p1t1``)."""
    if len(text) > MAX_BACKEND:
        return Engine(_too_long(text), {}, source)
    m = _COMPONENT.match(text)
    word = (m.group(1) or "").lower() if m else ""
    dims = m.group(2) if m else text
    if word and word not in TRAIN + INFER:
        if _DIMS_ONLY.match(text):
            word, dims = "", text
        else:
            return Engine(Unknown(f"backend {text[:60]!r} is none of AReaL's "
                                  f"({', '.join(TRAIN + INFER)}; alloc_mode.py:630-631)"),
                          {}, source)
    plain = _DIMS_ONLY.match(dims or "") is not None
    sizes = {k: int(n) for k, n in _DIM.findall(dims)} if plain else {}
    if word:
        return Engine(word, sizes, source)
    if not plain:
        return Engine(Unknown(f"engine {text[:60]!r} names no backend"), {}, source)
    # bare dimensions: v1.0.x picked the engine (refused at 4aef98d8, alloc_mode.py:907)
    auto = "megatron" if sizes.get("p", 1) > 1 or sizes.get("e", 1) > 1 else "fsdp"
    return Engine(auto, sizes, source, note=(
        f"{text[:40]!r} names no backend: AReaL v1.0.x auto-selects {auto} (v1.0.0 "
        "alloc_mode.py:929-936); 4aef98d8 refuses bare dimensions (alloc_mode.py:907)"))


def _too_long(text: str) -> Unknown:
    return Unknown(f"an engine string of {len(text):,} characters ({text[:40]!r}...), more "
                   f"than any AReaL job writes (a few dozen): not read")


def split_allocation(text: str, source: str) -> tuple[Engine | None, Engine | None]:
    """``(training engine, inference engine)`` of a legacy ``allocation_mode``."""
    if len(text) > MAX_BACKEND:
        return Engine(_too_long(text), {}, source), Engine(_too_long(text), {}, source)
    train: Engine | None = None
    infer: Engine | None = None
    for part in re.split(r"[+|]", text)[:8]:
        if not part.strip():
            continue
        eng = parse_component(part.strip(), source)
        if eng.backend in INFER and infer is None:
            infer = eng
        elif eng.backend in TRAIN and train is None:
            train = eng
        elif isinstance(eng.backend, Unknown) and train is None and ":" in part and \
                "(" in part:   # megatron:(attn:...|ffn:...) was split at its '|'
            train = Engine("megatron" if part.strip().lower().startswith("megatron") else
                           eng.backend, {}, source)
    return train, infer


def engines(facts: Mapping[str, Any], prov: Mapping[str, str]
            ) -> tuple[Engine | None, Engine | None]:
    """The actor's training engine and the rollout's inference engine, from ``actor.backend`` /
    ``rollout.backend``, else the legacy ``allocation_mode``; None where the config names
    neither (an Unknown value stays Unknown)."""
    def one(key: str) -> Engine | None:
        value = facts.get(f"{PREFIX}.{key}")
        src = prov.get(f"{PREFIX}.{key}", "intent")
        if isinstance(value, Unknown):
            return Engine(value, {}, src)
        if isinstance(value, str) and value.strip():
            return parse_component(value, src)
        return None
    actor, rollout = one("actor.backend"), one("rollout.backend")
    mode = facts.get(f"{PREFIX}.allocation_mode")
    msrc = prov.get(f"{PREFIX}.allocation_mode", "intent")
    if isinstance(mode, Unknown):
        return actor or Engine(mode, {}, msrc), rollout or Engine(mode, {}, msrc)
    if isinstance(mode, str) and mode.strip() and (actor is None or rollout is None):
        train, infer = split_allocation(mode, msrc)
        actor, rollout = actor or train, rollout or infer
    return actor, rollout


def _get(facts: Mapping[str, Any], key: str) -> Any:
    return facts.get(f"{PREFIX}.{key}")


def fp8_config_set(facts: Mapping[str, Any], key: str) -> Any:
    """Whether ``<key>`` (an FP8EngineConfig, None by default) is given: True when it or a
    field under it is set, False when absent or null, Unknown when its value is."""
    name = f"{PREFIX}.{key}"
    value = facts.get(name)
    if isinstance(value, Unknown):
        return value
    if any(n.startswith(name + ".") and v is not None for n, v in facts.items()):
        return True         # (a field the launch line removed, `=null` or `~`, is None)
    return value not in (None, "null", "None", "~") and name in facts


def truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in
                             {"true", "1", "yes", "on"})


def megatron_facts(facts: Mapping[str, Any], prov: Mapping[str, str]
                   ) -> tuple[dict[str, Any], dict[str, str]]:
    """What the actor's Megatron engine hands Megatron-Core, as ``config.megatron.*`` facts
    under Megatron-LM's argument names (empty unless the actor runs on Megatron)."""
    actor, _ = engines(facts, prov)
    out: dict[str, Any] = {}
    src: dict[str, str] = {}
    if actor is None or actor.backend != "megatron":
        return out, src

    def put(name: str, key: str | None, default: Any, where: str) -> None:
        full = f"{PREFIX}.{key}" if key else ""
        if key and full in facts:
            value = facts[full]
            out[f"{MEGATRON}.{name}"] = _words(value) if name in _BOOLS else value
            src[f"{MEGATRON}.{name}"] = prov.get(full, where)
        elif default is not None:
            out[f"{MEGATRON}.{name}"] = default
            src[f"{MEGATRON}.{name}"] = where

    meg = "actor.megatron"
    put("fp8_param_gather", f"{meg}.ddp.fp8_param_gather", False,
        f"{_CLI}:726 (ddp.fp8_param_gather: False)")
    if truthy(_get(facts, "actor.use_lora")):
        put("use_distributed_optimizer", None, False, prov.get(
            f"{PREFIX}.actor.use_lora", "") + " (LoRA: AReaL turns the distributed optimizer "
            "off, areal/models/mcore/registry.py:256-259)")
    else:
        put("use_distributed_optimizer", f"{meg}.ddp.use_distributed_optimizer", True,
            f"{_CLI}:722 (ddp.use_distributed_optimizer: True)")
    put("use_torch_fsdp2", f"{meg}.use_torch_fsdp2", False, f"{_CLI}:842")
    put("use_megatron_fsdp", f"{meg}.use_custom_fsdp", False, f"{_CLI}:843")
    put("overlap_param_gather", f"{meg}.ddp.overlap_param_gather", None, "")
    put("overlap_param_gather_with_optimizer_step",
        f"{meg}.overlap_param_gather_with_optimizer_step", None, "")
    dtype = str(_get(facts, "actor.dtype") or "bfloat16").lower()
    dsrc = prov.get(f"{PREFIX}.actor.dtype", f"{_CLI}:1098 (dtype: bfloat16)")
    out[f"{MEGATRON}.bf16"], src[f"{MEGATRON}.bf16"] = dtype in ("bfloat16", "bf16"), dsrc
    out[f"{MEGATRON}.fp16"], src[f"{MEGATRON}.fp16"] = dtype in ("float16", "fp16"), dsrc
    for dim, name in (("t", "tensor_model_parallel_size"), ("p", "pipeline_model_parallel_size"),
                      ("c", "context_parallel_size"), ("e", "expert_model_parallel_size")):
        if actor.sizes:
            out[f"{MEGATRON}.{name}"] = actor.sizes.get(dim, 1)
            src[f"{MEGATRON}.{name}"] = actor.source
    fp8 = fp8_config_set(facts, f"{meg}.fp8_config")
    if fp8 is True:
        fc = f"{meg}.fp8_config"
        put("fp8_format", f"{fc}.mode", "e4m3", f"{_CLI}:738-745 (fp8_config.mode: e4m3)")
        put("fp8_recipe", f"{fc}.recipe", "delayed",
            f"{_CLI}:747-752 (fp8_config.recipe: delayed)")
        for name in ("margin", "amax_history_len", "amax_compute_algo"):
            put(f"fp8_{name}", f"{fc}.{name}", None, "")
        put("first_last_layers_bf16", f"{fc}.first_last_layers_bf16", None, "")
    if truthy(_get(facts, "actor.gradient_checkpointing")):
        put("recompute_granularity", f"{meg}.recompute_granularity", "full",
            f"{_CLI}:886 (recompute_granularity: full)")
        put("recompute_method", f"{meg}.recompute_method", "uniform",
            f"{_CLI}:887 (recompute_method: uniform)")
        put("recompute_num_layers", f"{meg}.recompute_num_layers", 1,
            f"{_CLI}:888 (recompute_num_layers: 1)")
    if out:     # AReaL's settings, not a Megatron job of its own: Megatron's derive stays off
        out[f"{MEGATRON}.args_of"], src[f"{MEGATRON}.args_of"] = "areal", actor.source
        # no megatron.training: the Megatron rules citing validate_args stay quiet
        out[validated.NAME], src[validated.NAME] = validated.AREAL
        out[validated.PARSED], src[validated.PARSED] = validated.AREAL_PARSED
        out[validated.DROPS], src[validated.DROPS] = validated.AREAL_DROPS
        out[validated.POST_INIT], src[validated.POST_INIT] = validated.AREAL_POST_INIT
    return out, src


def _words(value: Any) -> Any:
    """A string OmegaConf converts for a bool field ('true', 'off', ...), as it does."""
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "yes", "on", "1"):
            return True
        if low in ("false", "no", "off", "0"):
            return False
    return value
