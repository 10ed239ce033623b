"""Per-framework intent: what each config kind says about FP8, precision, distribution, shapes.

Each ``from_<kind>(facts)`` reads ``config.<kind>.*`` facts and returns ``{intent_name: (value,
source)}`` for what that framework states (or implies through its documented default, with the
default named in ``source``). :mod:`preflight.intent` combines them across frameworks. Values
use the closed vocabularies of ``preflight/registry/intent.py``.
"""

from __future__ import annotations

import re

import math
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown

Derived = dict[str, tuple[Any, str]]

MAX_PLAUSIBLE = 2 ** 53
"""No real size, count or degree is larger. Above it JSON readers lose precision, and Python
refuses to print integers of more than 4,300 digits (``json.dumps`` raised on a 6,000-digit
token count built from two 3,000-digit arguments). :func:`preflight.intent` turns any intent
value beyond it into ``Unknown("not a plausible size")``."""

IMPLAUSIBLE = MAX_PLAUSIBLE + 1
"""What :meth:`View.int` gives for a digit string too long to be a real size: it stays "too big"
through products, so intent reports it as implausible instead of as absent."""

_ACC_DIST = {"DEEPSPEED": "deepspeed", "MULTI_GPU": "ddp", "NO": "none", "MEGATRON_LM": "megatron",
             "MULTI_CPU": "ddp", "MULTI_XPU": "ddp", "MULTI_NPU": "ddp", "MULTI_MLU": "ddp",
             "MULTI_MUSA": "ddp", "MULTI_HPU": "ddp", "MULTI_SDAA": "ddp", "XLA": "none",
             "TPU": "none"}
_ACC_BACKEND = {"TE": "te", "MSAMP": "msamp", "AO": "torchao"}
LIT_PRECISION = {"transformer-engine": "fp8", "transformer-engine-float16": "fp8",
                  "bf16-mixed": "bf16", "bf16-true": "bf16", "bf16": "bf16", "16-mixed": "fp16",
                  "16-true": "fp16", "16": "fp16", "32-true": "fp32", "32": "fp32",
                  "64-true": "fp32"}
# torchtitan llama3 flavors (torchtitan/models/llama3/__init__.py): dim, FFN hidden size.
_TT_FLAVORS = {("llama3", "8B"): (4096, 14336), ("llama3", "70B"): (8192, 28672),
               ("llama3", "405B"): (16384, 53248), ("llama3", "debugmodel"): (256, 768)}


class View:
    """Read helpers over the facts of one kind: value, source, typed access."""

    def __init__(self, facts: Mapping[str, Any], kind: str, prov: Mapping[str, str]) -> None:
        self.facts, self.prefix, self.prov = facts, f"config.{kind}.", prov

    def has(self, key: str) -> bool:
        return self.prefix + key in self.facts

    def get(self, key: str, default: Any = None) -> Any:
        value = self.facts.get(self.prefix + key, default)
        return default if isinstance(value, Unknown) else value

    def unknown(self, key: str) -> Unknown | None:
        """The ``Unknown`` a reader stored for ``key`` (e.g. a flag given without its value)."""
        value = self.facts.get(self.prefix + key)
        return value if isinstance(value, Unknown) else None

    def src(self, key: str, fallback: str = "intent") -> str:
        return self.prov.get(self.prefix + key, fallback)

    def int(self, key: str) -> int | None:
        """An integer setting (``4`` or ``"4"``); None when absent or not an integer.

        Larger than :data:`MAX_PLAUSIBLE` stays larger (a 5,000-digit string gives
        :data:`IMPLAUSIBLE` rather than ``int()``, which refuses more than 4,300 digits)."""
        value = self.get(key)
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        # ASCII digits only: str.isdigit() accepts "²", which int() refuses.
        if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value.strip()):
            digits = value.strip().lstrip("-")
            if len(digits.lstrip("0")) > 16:
                return -IMPLAUSIBLE if value.strip().startswith("-") else IMPLAUSIBLE
            return int(value)
        return None

    def truthy(self, key: str) -> bool:
        value = self.get(key)
        if isinstance(value, str):
            return value.strip().lower() in {"true", "1", "yes"}
        return bool(value) and value is not None

    def any_prefix(self, key: str) -> bool:
        p = self.prefix + key + "."
        return self.has(key) or any(n.startswith(p) for n in self.facts)


def _ds_precision(facts: Mapping[str, Any], prov: Mapping[str, str], under_fp8: bool,
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


def from_accelerate(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    a = View(f, "accelerate", prov)
    out: Derived = {}
    mp = a.get("mixed_precision")
    mp_src = a.src("mixed_precision")
    if mp is None and isinstance(f.get("env.ACCELERATE_MIXED_PRECISION"), str):
        mp, mp_src = f["env.ACCELERATE_MIXED_PRECISION"], prov.get(
            "env.ACCELERATE_MIXED_PRECISION", "env.ACCELERATE_MIXED_PRECISION")
    fp8 = str(mp).lower() == "fp8"
    if mp is not None:
        out["fp8"] = (fp8, mp_src)
    elif a.any_prefix("fp8_config"):
        # With a deepspeed_config_file, mixed_precision must stay out of the YAML (FP8D-ACC-0003)
        # and comes from `accelerate launch --mixed_precision` or the script: an fp8_config block
        # says FP8 is meant, but only the launch line can say it is on.
        out["fp8"] = (Unknown("the accelerate YAML has an fp8_config but no mixed_precision: "
                              "FP8 is switched on by --mixed_precision fp8 or in the script"),
                      next((prov[k] for k in prov if k.startswith(a.prefix + "fp8_config.")),
                           "accelerate config"))
    if mp is False or str(mp).lower() in {"no", "bf16", "fp16"}:
        out["precision"] = ({"no": "fp32", "false": "fp32"}.get(str(mp).lower(), str(mp).lower()),
                            mp_src)
    dist = a.get("distributed_type")
    if isinstance(dist, str):
        value = _ACC_DIST.get(dist.upper())
        if dist.upper() == "FSDP":
            value = "fsdp2" if a.int("fsdp_config.fsdp_version") == 2 else "fsdp1"
        if value:
            out["distributed"] = (value, a.src("distributed_type"))
    if a.int("deepspeed_config.zero_stage") is not None:
        out["zero_stage"] = (a.int("deepspeed_config.zero_stage"),
                             a.src("deepspeed_config.zero_stage"))
    if a.int("num_processes") is not None:
        out["num_gpus"] = (a.int("num_processes"), a.src("num_processes"))
    backend_key = "dynamo_config.dynamo_backend" if a.has("dynamo_config.dynamo_backend") \
        else "dynamo_backend"
    dyn = a.get(backend_key)
    if dyn is not None and str(dyn).upper() not in {"NO", "FALSE", "NONE"}:
        out["compile"] = (True, a.src(backend_key))
    else:
        # accelerate will not compile. A torch.compile call in the script is invisible to a config
        # reader; the rules (FP8D-TAO-0004, CONFIG_FACTS_USED.md) want the config's answer.
        out["compile"] = (False, a.src(backend_key, "accelerate config has no dynamo backend"))
    if a.has("fsdp_config.fsdp_activation_checkpointing"):
        out["activation_checkpointing"] = (a.truthy("fsdp_config.fsdp_activation_checkpointing"),
                                           a.src("fsdp_config.fsdp_activation_checkpointing"))
    if fp8:
        _accelerate_fp8(a, f, prov, out)
    return out


def _accelerate_fp8(a: View, f: Mapping[str, Any], prov: Mapping[str, str], out: Derived) -> None:
    raw = a.get("fp8_config.backend")
    src = a.src("fp8_config.backend")
    if raw is None and isinstance(f.get("env.ACCELERATE_FP8_BACKEND"), str):
        raw, src = f["env.ACCELERATE_FP8_BACKEND"], "env.ACCELERATE_FP8_BACKEND"
    backend = _ACC_BACKEND.get(str(raw).upper()) if raw is not None else None
    if backend is None:
        out["backend"] = (Unknown("fp8_config.backend not set: accelerate picks the backend "
                                  "from what is installed (torchao, TE, MS-AMP from 1.4.0)"), src)
    else:
        out["backend"] = (backend, src)
    if backend == "te":
        mx = a.truthy("fp8_config.use_mxfp8_block_scaling")
        out["recipe"] = ("mxfp8" if mx else "delayed",
                         a.src("fp8_config.use_mxfp8_block_scaling", src))
    elif backend == "torchao":
        out["recipe"] = ("tensorwise", src)  # AORecipeKwargs default Float8LinearConfig()
    fmt = a.get("fp8_config.fp8_format")
    if isinstance(fmt, str):
        out["format"] = (fmt.lower(), a.src("fp8_config.fp8_format"))
    elif backend in (None, "te"):
        out["format"] = (Unknown("fp8_format not set: `accelerate launch` exported E4M3 before "
                                 "1.8.1 and HYBRID from 1.8.1"), "intent")
    if out.get("distributed", (None,))[0] == "deepspeed":
        ds = _ds_precision(f, prov, under_fp8=True)
        if ds is not None:
            out["precision"] = ds
        else:
            out["precision"] = ("bf16", "accelerate sets DeepSpeed bf16 for fp8")
    else:
        out["precision"] = ("bf16", "accelerate autocasts non-FP8 ops to bf16 under fp8")


def from_deepspeed(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    d = View(f, "deepspeed", prov)
    out: Derived = {"distributed": ("deepspeed", prov.get("config.files", "config"))}
    stage = d.get("zero_optimization.stage")
    if d.int("zero_optimization.stage") is not None:     # 3, or "3" as generated JSON has it
        out["zero_stage"] = (d.int("zero_optimization.stage"), d.src("zero_optimization.stage"))
    elif stage is None:
        out["zero_stage"] = (0, d.src("zero_optimization", "DeepSpeed default (stage 0)"))
    else:
        out["zero_stage"] = (Unknown(f"zero_optimization.stage is {stage!r}"),
                             d.src("zero_optimization.stage"))
    prec = _ds_precision(f, prov, under_fp8=False)
    if prec is not None:
        out["precision"] = prec
    if d.truthy("msamp.enabled"):
        # MS-AMP's DeepSpeed integration (msamp.deepspeed.initialize) trains in FP8 from this
        # block; DeepSpeed's own "fp8" block does nothing (research DS-02) and is not read here.
        out["fp8"] = (True, d.src("msamp.enabled"))
        out["backend"] = ("msamp", d.src("msamp.enabled"))
    return out


def from_hf_trainer(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    h = View(f, "hf_trainer", prov)
    out: Derived = {}
    if h.get("fp8") is True:
        # LlamaFactory (Fp8Arguments: fp8, fp8_backend) and axolotl (fp8: true, torchao
        # tensorwise) add their own fp8 key on top of TrainingArguments.
        src = h.src("fp8")
        out["fp8"] = (True, src)
        raw = h.get("fp8_backend")
        backend = {"te": "te", "torchao": "torchao", "ao": "torchao", "msamp": "msamp"}.get(
            str(raw).lower()) if raw is not None else None
        if backend is None and h.has("base_model"):           # axolotl: torchao only
            backend, raw = "torchao", "axolotl"
        out["backend"] = ((backend, h.src("fp8_backend", src)) if backend else
                          (Unknown(f"fp8_backend {raw or 'auto'!r}: picked at run time from "
                                   "what is installed"), h.src("fp8_backend", src)))
        if backend == "torchao":
            out["recipe"] = ("tensorwise", src)
    # TrainingArguments: fp16 is checked first, then bf16 (Trainer's mixed-precision setup).
    for key in ("fp16", "bf16"):
        if h.get(key) is True:
            out["precision"] = (key, h.src(key))
            out["overrides_fp8"] = (True, h.src(key))
            break
    if h.has("gradient_checkpointing"):
        out["activation_checkpointing"] = (h.truthy("gradient_checkpointing"),
                                           h.src("gradient_checkpointing"))
    if h.has("torch_compile"):
        out["compile"] = (h.truthy("torch_compile"), h.src("torch_compile"))
    if h.get("deepspeed"):
        out["distributed"] = ("deepspeed", h.src("deepspeed"))
    elif h.get("fsdp"):
        v2 = h.int("fsdp_config.fsdp_version") == 2 or h.int("fsdp_config.version") == 2
        out["distributed"] = ("fsdp2" if v2 else "fsdp1", h.src("fsdp"))
    elif h.has("base_model") and h.any_prefix("fsdp_config"):   # axolotl: fsdp_config is FSDP
        v2 = h.int("fsdp_version") == 2 or h.int("fsdp_config.fsdp_version") == 2
        out["distributed"] = ("fsdp2" if v2 else "fsdp1",
                              h.src("fsdp_version", h.src("fsdp_config")))
    mb_key = "per_device_train_batch_size" if h.has("per_device_train_batch_size") \
        else "micro_batch_size"
    mb = h.int(mb_key)
    for seq_key in ("max_seq_length", "max_length", "max_seq_len", "block_size", "sequence_len",
                    "cutoff_len"):
        seq = h.int(seq_key)
        if mb and seq:
            out["shapes.tokens"] = (mb * seq, h.src(seq_key))
            break
    return out


def from_llmfoundry(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    m = View(f, "llmfoundry", prov)
    out: Derived = {}
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
    return out


_TT_FP8 = {"float8", "quantize.linear.float8", "quantize.grouped_mm.float8"}
_TT_MX = {"mx", "quantize.linear.mx", "quantize.grouped_mm.mx"}


def from_torchtitan(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    t = View(f, "torchtitan", prov)
    out: Derived = {}
    converters = t.get("model.converters") or []
    converters = [str(c) for c in converters] if isinstance(converters, list) else []
    fp8_src = None
    if _TT_FP8 & set(converters) or _TT_MX & set(converters):
        fp8_src = t.src("model.converters")
    elif t.truthy("float8.enable_float8_linear"):      # 2024-07 .. 2025-02 layout
        fp8_src = t.src("float8.enable_float8_linear")
    elif t.truthy("training.enable_fp8_linear") or t.truthy("training.fp8_linear") or \
            str(t.get("training.fp8_linear", "")).lower() in {"dynamic", "delayed"}:
        # before 2024-07-16 (PR #413) `fp8_linear` was a string choice: "" (off) or "dynamic"
        key = "training.enable_fp8_linear" if t.has("training.enable_fp8_linear") \
            else "training.fp8_linear"
        fp8_src = t.src(key)
    out["fp8"] = (fp8_src is not None, fp8_src or t.src("model", "no float8 converter"))
    if fp8_src is not None:
        out["backend"] = ("torchao", fp8_src)
        delayed = [k for k in ("float8.scaling_type_input", "float8.scaling_type_weight",
                               "float8.scaling_type_grad_output")
                   if str(t.get(k, "")).lower() == "delayed"]
        if _TT_MX & set(converters):
            out["recipe"] = ("mxfp8", fp8_src)
        elif delayed:   # 2024 layout: [float8] scaling_type_* = "delayed" (torchao delayed scaling)
            out["recipe"] = ("delayed", t.src(delayed[0]))
        elif str(t.get("training.fp8_linear", "")).lower() == "dynamic":
            out["recipe"] = ("tensorwise", t.src("training.fp8_linear"))   # dynamic per-tensor
        else:
            key = "quantize.linear.float8.recipe_name" if t.has(
                "quantize.linear.float8.recipe_name") else "float8.recipe_name"
            out["recipe"] = (t.get(key, "tensorwise"), t.src(key, "torchao default (tensorwise)"))
        out["precision"] = ("bf16", fp8_src)
    # torchtitan/distributed/parallel_dims.py: fully_shard when dp_shard > 1 or cp > 1 (dp_shard
    # -1, the default, takes the ranks TP/PP/CP leave); DDP when only dp_replicate > 1; with
    # dp_shard = dp_replicate = 1 there is no data-parallel wrapper at all (TP/PP only).
    shard = t.int("parallelism.data_parallel_shard_degree")
    replicate = t.int("parallelism.data_parallel_replicate_degree") or 1
    cp_degree = t.int("parallelism.context_parallel_degree") or 1
    shard_src = t.src("parallelism.data_parallel_shard_degree")
    if shard == 1 and cp_degree <= 1:
        out["distributed"] = ("ddp", shard_src) if replicate > 1 else ("none", shard_src)
    else:
        out["distributed"] = ("fsdp2", t.src("parallelism", "torchtitan shards with FSDP2"))
    key = "compile.enable" if t.has("compile.enable") else "training.compile"
    out["compile"] = (t.truthy(key), t.src(key, "torchtitan default (off)"))
    components = t.get("compile.components")
    if key == "compile.enable" and t.truthy(key) and isinstance(components, list) and \
            "model" not in [str(c) for c in components]:
        # [compile] components = ["loss"]: only the loss is compiled, the model runs eager
        out["compile"] = (False, t.src("compile.components"))
    mode = t.get("activation_checkpoint.mode")
    out["activation_checkpointing"] = (
        str(mode).lower() != "none" if mode is not None else True,
        t.src("activation_checkpoint.mode", "torchtitan default (selective)"))
    dims = _TT_FLAVORS.get((str(t.get("model.name")), str(t.get("model.flavor"))))
    if dims:
        out["shapes.hidden"] = (dims[0], t.src("model.flavor"))
        out["shapes.ffn"] = (dims[1], t.src("model.flavor"))
    mb_key = "training.local_batch_size" if t.has("training.local_batch_size") \
        else "training.batch_size"
    mb, seq = t.int(mb_key), t.int("training.seq_len")
    cp = t.int("parallelism.context_parallel_degree") or 1
    if mb and seq:
        out["shapes.tokens"] = (mb * seq // max(cp, 1), t.src("training.seq_len"))
    tp = t.int("parallelism.tensor_parallel_degree") or t.int("training.tensor_parallel_degree")
    if tp:
        out["shapes.tp"] = (tp, t.src("parallelism.tensor_parallel_degree"))
    return out
