"""NeMo-RL's Quantization-Aware RL (QARL) K/V recipes, for :mod:`.nemo_rl`: simulated
(fake-quantized) FP8 or NVFP4 K/V, never an FP8 KV cache.

Read at NVIDIA-NeMo/RL d8850452 (2026-08-11), docs/guides/quantization-aware-rl.md
("Simulated KV-Cache Quantization") and examples/modelopt/quant_configs/kv_cache_fp8.yaml:
``policy.quant_cfg`` (the Megatron policy) and ``policy.generation.quant_cfg`` (the vLLM rollout)
name a ModelOpt recipe (a built-in config name, a ModelOpt PTQ recipe name, or a YAML path).
``kv_cache_fp8.yaml`` enables only the ``*[kv]_bmm_quantizer`` quantizers with ``num_bits: e4m3``
(fake quantization, constant amax); "This path does not enable vLLM's native FP8 KV-cache
storage": vLLM's KV cache keeps ``vllm_cfg.kv_cache_dtype`` (``intent.rollout.kv_cache_fp8`` is
unchanged), the K/V values are quantized and dequantized in BF16 compute.

Facts (``config.nemo_rl.<side>_kv_fake_quant``, side ``policy`` or ``rollout``): ``fp8`` |
``nvfp4`` where the recipe fake-quantizes K/V in that format, ``none`` where it names no K/V
quantizer, Unknown where the recipe is not read (outside the job, a name fp8-doctor does not
know); absent where no ``quant_cfg`` is set. A recipe YAML is read where it lies inside the job
(:func:`preflight.reading.parse.read_text`: the read boundary, 1 MiB), else judged by the names
NeMo-RL ships.
"""

from __future__ import annotations

import os
import re
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading.parse import ParseError, parse_yaml, read_text
from preflight.reading.refs import locate, under_roots
from preflight.reading.types import ReaderOutput

PREFIX = "config.nemo_rl"
SIDES = (("policy", "policy.quant_cfg"), ("rollout", "policy.generation.quant_cfg"))
_SRC = "NeMo-RL d8850452 examples/modelopt/quant_configs"
# the recipes NeMo-RL ships (examples/modelopt/quant_configs at d8850452): which K/V quantizer
SHIPPED = {"kv_cache_fp8.yaml": "fp8", "kv_cache_nvfp4.yaml": "nvfp4",
           "nvfp4_a16.yaml": "none", "nvfp4_a16_mlp_only.yaml": "none",
           "nvfp4_experts.yaml": "none", "nvfp4_experts_weightonly.yaml": "none",
           "nano3_nvfp4_default.yaml": "none", "nano3_nvfp4_weightonly.yaml": "none"}
# ModelOpt's built-in names: `..._FP8_KV_CFG`-style and PTQ recipe names ending `-fp8_kv`
_BUILTIN = re.compile(r"^(?:[A-Z0-9_]+_CFG|general/ptq/[\w.-]+)$")
_KV = re.compile(r"(?i)(nvfp4|fp8)[_-]kv\b")
MAX_ENTRIES = 256


def apply(path: str, out: ReaderOutput) -> ReaderOutput:
    """``out`` with the ``*_kv_fake_quant`` facts of the quant_cfg values it holds."""
    facts, prov = dict(out.facts), dict(out.provenance)
    added = False
    for side, key in SIDES:
        name = f"{PREFIX}.{key}"
        if name not in facts or facts[name] in (None, "", "null", "None"):
            continue
        where = prov.get(name, Source(path, None))
        facts[f"{PREFIX}.{side}_kv_fake_quant"] = _recipe(facts[name], path)
        prov[f"{PREFIX}.{side}_kv_fake_quant"] = where
        added = True
    if not added:
        return out
    return ReaderOutput(facts, prov, out.problems, out.linked)


def _recipe(value: Any, naming_file: str) -> Any:
    """The K/V fake-quant format ``value`` (a quant_cfg) names (module docstring)."""
    if isinstance(value, Unknown):
        return value
    if not isinstance(value, str):
        return Unknown(f"quant_cfg is {type(value).__name__}, not a recipe name or path")
    text = value.strip()
    if _BUILTIN.match(text):
        kv = _KV.search(text)
        return kv.group(1).lower() if kv else "none"
    if not text.endswith((".yaml", ".yml")):
        return Unknown(f"quant_cfg {text[:80]!r} is no ModelOpt name or recipe YAML fp8-doctor "
                       "knows")
    found = locate(text, naming_file) or under_roots(text)
    if found is not None:
        return _read(found)
    base = os.path.basename(text)
    if base in SHIPPED and (not os.path.isabs(text) or "/examples/modelopt/" in text):
        return SHIPPED[base]
    return Unknown(f"the recipe {text[:80]!r} is not inside the job: which quantizers it "
                   "enables is not known")


def _read(file: str) -> Any:
    """``fp8`` / ``nvfp4`` / ``none`` from a recipe YAML's ``quantize.quant_cfg`` list: the
    enabled ``*[kv]_bmm_quantizer`` entries' ``num_bits`` (e4m3: FP8; e2m1: NVFP4)."""
    try:
        data = parse_yaml(read_text(file)).data
    except (ParseError, OSError, ValueError) as exc:
        return Unknown(f"{os.path.basename(file)} was not read: {str(exc)[:120]}")
    entries = data.get("quantize", {}).get("quant_cfg") if isinstance(data, dict) and \
        isinstance(data.get("quantize"), dict) else None
    if not isinstance(entries, list):
        return Unknown(f"{os.path.basename(file)} has no quantize.quant_cfg list")
    kv: Any = "none"
    for entry in entries[:MAX_ENTRIES]:
        if not isinstance(entry, dict) or "kv" not in str(entry.get("quantizer_name", "")) or \
                "bmm_quantizer" not in str(entry.get("quantizer_name", "")):
            continue
        enabled = entry.get("enable", True)
        raw = entry.get("cfg")
        cfg: dict[str, Any] = raw if isinstance(raw, dict) else {}
        bits = str(cfg.get("num_bits", "")).lower()
        if enabled is False or str(enabled).lower() == "false":
            continue
        kv = "fp8" if bits in ("e4m3", "(4, 3)", "[4, 3]") else "nvfp4" if bits in (
            "e2m1", "(2, 1)", "[2, 1]") else Unknown(f"K/V num_bits {bits[:20]!r}")
    return kv
