"""torchtitan: the job TOML, tables as written (``[quantize.linear.float8]`` ->
``config.torchtitan.quantize.linear.float8.*``); float8 / MX converters ask for FP8 (torchao).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import nous_grpo, torchtitan_launch
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.frameworks.torchtitan_py import read_python
from preflight.reading.readers import read_plain

KIND = "torchtitan"


def score(data: Any) -> int:
    """How strongly a parsed mapping looks like a torchtitan job TOML."""
    top = {str(k) for k in data}
    s = 3 * len(top & {"float8", "parallelism", "quantize", "activation_checkpoint",
                       "experimental", "mx"})
    weak = len(top & {"job", "training", "model", "optimizer", "lr_scheduler", "checkpoint",
                      "metrics", "compile", "comm"})
    # a lone `model:` (an llm-foundry or NeMo snippet) is no torchtitan job (issue 22 item 5);
    # `[model]` and `[optimizer]` are any trainer's: without a section of its own, a torchtitan
    # job names `job.dump_folder` or `model.flavor` (torchtitan/config/job_config.py)
    own = bool(s) or any(isinstance(data.get(section), dict) and not keys.isdisjoint(
        map(str, data[section])) for section, keys in _OWN_FIELDS)
    return s + weak if own and (s or weak >= 2) else 0


_OWN_FIELDS = (
    ("job", frozenset({"dump_folder"})),
    ("model", frozenset({"flavor", "hf_assets_path", "converters"})),
    ("training", frozenset({"fp8_linear", "enable_float8_linear", "enable_fp8_linear",
                            "data_parallel_shard_degree", "data_parallel_replicate_degree",
                            "tensor_parallel_degree", "local_batch_size", "max_norm"})))
"""JobConfig fields only torchtitan has (torchtitan/config/job_config.py; ``training.fp8_linear``
before PR #413): one claims a TOML whose sections are all generic names."""


# torchtitan llama3 flavors (torchtitan/models/llama3/__init__.py): dim, FFN hidden size.
_TT_FLAVORS = {("llama3", "8B"): (4096, 14336), ("llama3", "70B"): (8192, 28672),
               ("llama3", "405B"): (16384, 53248), ("llama3", "debugmodel"): (256, 768)}


# torchtitan llama3 flavors (torchtitan/models/llama3/__init__.py at v0.1.0): heads, kv heads,
# layers; every flavor has the Llama 3 tokenizer's vocabulary.
_TT_HEADS = {"8B": (32, 8, 32), "70B": (64, 8, 80), "405B": (128, 8, 126)}
_TT_VOCAB = 128256


def model_shape(f: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    """Heads, KV heads, layers and vocabulary of the llama3 flavor the job names."""
    flavor = f.get(f"config.{KIND}.model.flavor")
    if not isinstance(flavor, str) or flavor not in _TT_HEADS:
        return {}
    a, kv, n = _TT_HEADS[flavor]
    where = f"torchtitan llama3 flavor {flavor}"
    return {"heads": (a, where), "kv_heads": (kv, where), "layers": (n, where),
            "vocab": (_TT_VOCAB, where)}


_TT_FP8 = {"float8", "quantize.linear.float8", "quantize.grouped_mm.float8"}


_TT_MX = {"mx", "quantize.linear.mx", "quantize.grouped_mm.mx"}
_TT_NVFP4 = {"quantize.linear.nvfp4"}


def _sequence(t: View, out: IntentOut) -> None:
    """Tokens per micro-batch, sequence length, micro-batch, packing and EP (issue 23 facts)."""
    mb_key = "training.local_batch_size" if t.has("training.local_batch_size") \
        else "training.batch_size"
    mb, seq = t.int(mb_key), t.int("training.seq_len")
    cp = t.int("parallelism.context_parallel_degree") or 1
    tokens = t.int("training.num_tokens_per_microbatch_per_dp_rank")   # Python configs (2026)
    if mb and seq:
        out["shapes.tokens"] = (mb * seq // max(cp, 1), t.src("training.seq_len"))
    elif tokens:
        out["shapes.tokens"] = (tokens // max(cp, 1),
                                t.src("training.num_tokens_per_microbatch_per_dp_rank"))
    # The shared sequence facts (issue 23): torchtitan's text datasets cut the token stream into
    # samples of exactly training.seq_len (datasets/hf_datasets.py), nothing is packed at run time.
    if seq:
        out["seq_len"] = (seq, t.src("training.seq_len"))
    if mb:
        out["micro_batch"] = (mb, t.src(mb_key))
    out["packing"] = (False, "torchtitan datasets yield fixed training.seq_len samples")
    if t.has("job.config_function"):
        # The Python configs (2026, pytorch/torchtitan b5bcd76) choose a packing dataset
        # (ConcatThenSplitPackingConfig, FirstFitPackingConfig) and a max_context_length
        dataset = str(t.get("dataloader.dataset.class", ""))
        out["packing"] = ((dataset.endswith("PackingConfig") if dataset else
                           Unknown("the Python config's dataset is not given in the text")),
                          t.src("dataloader.dataset.class", t.src("job.config_function")))
        if t.int("training.max_context_length"):
            out["seq_len"] = (t.int("training.max_context_length"),
                              t.src("training.max_context_length"))
    ep = t.int("parallelism.expert_parallel_degree")
    if ep:
        out["ep"] = (ep, t.src("parallelism.expert_parallel_degree"))


def converter_names(raw: Any) -> list[str]:
    """The converters ``[model] converters`` asks for. A string is the comma list torchtitan's
    argparse config split it into (``string_list``, config_manager.py l.31-45 at 01424cb2; its
    2025-04 presets say ``converters = "float8"``): FP8 is asked either way, though from 0.1.0
    the typed config keeps the string and fails on it at start-up (FP8D-TT-0020)."""
    if isinstance(raw, str):
        return [s.strip() for s in raw.split(",") if s.strip()]
    return [str(c) for c in raw] if isinstance(raw, list) else []


# The converter names torchtitan registers (register_model_converter): "float8" and "mx" at
# v0.1.0 (components/quantization/float8.py l.131, mx.py l.96), the quantize.* names at v0.2.2
# (float8.py l.238-239, mx.py l.171-172). A fork registers its own (a ModelOpt converter, a QAT
# one, a KV-cache one): a name outside these is read for what it may do, never as "no FP8".
_REGISTERED = _TT_FP8 | _TT_MX | _TT_NVFP4
_FORK_FP8 = re.compile(r"float8|fp8|mxfp|nvfp4", re.IGNORECASE)
_NO_CONVERTER = frozenset({"none", "null", "[]", "false", "off"})

# [quantize.*] settings that ask for FP8 when the TOML names no converter at all: torchtitan
# builds only the converters of model.converters (protocols/model_converter.py l.60-63 at
# v0.2.2), which a launch line gives as often as the TOML (docs/float8.md at v0.2.2:
# `--model.converters="quantize.linear.float8"`), so a recipe chosen in the TOML is the job's
# request (FP8D-TT-0001 / FP8D-TT-0028 say when it will not apply). Template values are no
# request: the shipped v0.2.x TOMLs carry the float8 table with all-gather and precompute false
# and filter_fqns, and grouped-MM tables with fqns = ["experts"], all without a converter.
_REQUESTS: tuple[tuple[str, str], ...] = (
    ("quantize.linear.mx.recipe_name", "mx"),
    ("quantize.linear.mx.mxfp8_dim1_cast_kernel_choice", "mx"),
    ("quantize.grouped_mm.mx.recipe_name", "mx"),
    ("quantize.linear.float8.recipe_name", "float8"),
    ("quantize.linear.float8.enable_fsdp_float8_all_gather", "float8"),
    ("quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp", "float8"),
    ("quantize.linear.float8.emulate", "float8"))


def _kind(names: set[str]) -> str:
    return "mx" if _TT_MX & names else "nvfp4" if _TT_NVFP4 & names else "float8"


def _asked(t: View, converters: list[str]) -> tuple[str | None, str]:
    """Where FP8 is asked (or None) and the converter kind ("float8", "mx", "nvfp4", "fork")."""
    names = set(converters)
    if _REGISTERED & names:
        return t.src("model.converters"), _kind(names)
    fork = sorted(n for n in names if _FORK_FP8.search(n))
    if fork:
        return t.src("model.converters"), "fork"
    if t.truthy("float8.enable_float8_linear"):      # 2024-07 .. 2025-02 layout
        return t.src("float8.enable_float8_linear"), "float8"
    if t.truthy("training.enable_fp8_linear") or t.truthy("training.fp8_linear") or \
            str(t.get("training.fp8_linear", "")).lower() in {"dynamic", "delayed"}:
        # before 2024-07-16 (PR #413) `fp8_linear` was a string choice: "" (off) or "dynamic"
        key = "training.enable_fp8_linear" if t.has("training.enable_fp8_linear") \
            else "training.fp8_linear"
        return t.src(key), "float8"
    if t.has("model.converters") or t.unknown("model.converters"):
        return None, ""
    asked = [(key, kind) for key, kind in _REQUESTS if t.has(key) and not t.unknown(key)
             and t.get(key) not in (None, False, "", [])]
    if not asked:
        return None, ""
    kinds = {kind for _, kind in asked}
    key = next(k for k, kind in asked if kind == ("mx" if "mx" in kinds else "float8"))
    return t.src(key), "mx" if "mx" in kinds else "float8"


def _fork_converter(converters: list[str]) -> Unknown | None:
    """A converter name torchtitan does not register: what it does is the fork's code, unknown."""
    # "none" / "null" / "[]": what a launch line writes for no converter (torchtitan itself would
    # refuse the name at start-up: no FP8 either way)
    other = [n for n in converters if n not in _REGISTERED and n.lower() not in _NO_CONVERTER]
    if not other:
        return None
    return Unknown(f"converter {other[0][:60]!r} is not one torchtitan registers (float8, mx, "
                   "quantize.linear/grouped_mm.float8/mx): a fork's converter may quantize")


def _compile(t: View) -> tuple[Any, str]:
    """Whether the model is compiled: ``[compile] enable`` and "model" in ``components``
    (default ["model", "loss"]; v0.2.0 models/llama3/infra/parallelize.py l.94-110), 0.1.x
    ``[training] compile``."""
    key = "compile.enable" if t.has("compile.enable") else "training.compile"
    components = t.get("compile.components")
    if key == "compile.enable" and t.truthy(key) and t.unknown("compile.components"):
        return t.unknown("compile.components"), t.src("compile.components")
    if key == "compile.enable" and t.truthy(key) and isinstance(components, list) and \
            "model" not in [str(c) for c in components]:
        # [compile] components = ["loss"]: only the loss is compiled, the model runs eager
        return False, t.src("compile.components")
    return t.unknown(key) or t.truthy(key), t.src(key, "torchtitan default (off)")


def _wrapping(t: View, out: IntentOut, unread: Unknown | None) -> None:
    """How the model is sharded, compiled and checkpointed; what a config not read would decide
    (``unread``) is unknown, not torchtitan's default."""
    # torchtitan/distributed/parallel_dims.py: fully_shard when dp_shard > 1 or cp > 1 (dp_shard
    # -1, the default, takes the ranks TP/PP/CP leave); DDP when only dp_replicate > 1; with
    # dp_shard = dp_replicate = 1 there is no data-parallel wrapper at all (TP/PP only).
    shard = t.int("parallelism.data_parallel_shard_degree")
    replicate = t.int("parallelism.data_parallel_replicate_degree") or 1
    cp_degree = t.int("parallelism.context_parallel_degree") or 1
    shard_src = t.src("parallelism.data_parallel_shard_degree")
    undecided = next((u for k in ("data_parallel_shard_degree", "data_parallel_replicate_degree",
                                  "context_parallel_degree")
                      if (u := t.unknown(f"parallelism.{k}")) is not None), None)
    if undecided is None and not t.has("parallelism.data_parallel_shard_degree"):
        undecided = unread
    if undecided is not None:
        out["distributed"] = (undecided, shard_src)
    elif shard == 1 and cp_degree <= 1:
        out["distributed"] = ("ddp", shard_src) if replicate > 1 else ("none", shard_src)
    else:
        out["distributed"] = ("fsdp2", t.src("parallelism", "torchtitan shards with FSDP2"))
        if shard is not None and shard > 0:
            # fully_shard over the "fsdp" mesh, dp_shard x cp (distributed/parallel_dims.py
            # l.197 at v0.2.2); -1 takes what the world leaves, not known from the config alone
            out["fsdp_shard_size"] = (shard * max(cp_degree, 1), shard_src)
    out["compile"] = _compile(t) if unread is None or t.has("compile.enable") or \
        t.has("training.compile") else (unread, t.src("base_config"))
    mode = t.get("activation_checkpoint.mode")
    out["activation_checkpointing"] = (
        t.unknown("activation_checkpoint.mode") or
        (str(mode).lower() != "none" if mode is not None else unread or True),
        t.src("activation_checkpoint.mode", "torchtitan default (selective)" if unread is None
              else t.src("base_config")))


def from_torchtitan(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    t = View(f, "torchtitan", prov)
    out = IntentOut()
    converters = converter_names(t.get("model.converters"))
    fp8_src, kind = _asked(t, converters)
    out["fp8"] = (fp8_src is not None, fp8_src or t.src("model", "no float8 converter"))
    base = f.get("config.torchtitan.base_config")
    # a config file or registry config not read (or read only as far as one file sets it): what
    # it would decide is not torchtitan's default, it is unknown
    unread = base if isinstance(base, Unknown) else None
    fork = _fork_converter(converters) if fp8_src is None else None
    if fp8_src is None and t.unknown("model.converters"):
        # e.g. a Python config registry whose configs differ on it: not "no" (issue 22 item 5)
        out["fp8"] = (t.unknown("model.converters"), t.src("model.converters"))
    elif fork is not None:
        out["fp8"] = (fork, t.src("model.converters"))
    elif fp8_src is None and isinstance(base, Unknown):
        # a launch line whose --job.config_file was not read: the converters may be there
        out["fp8"] = (base, t.src("base_config"))
    if fp8_src is not None:
        out["backend"] = ("torchao", fp8_src)
        delayed = [k for k in ("float8.scaling_type_input", "float8.scaling_type_weight",
                               "float8.scaling_type_grad_output")
                   if str(t.get(k, "")).lower() == "delayed"]
        if kind == "mx":
            out["recipe"] = ("mxfp8", fp8_src)
        elif kind == "fork":
            out["recipe"] = (Unknown("a fork's converter: its recipe is its code's"), fp8_src)
        elif kind == "nvfp4":
            out["recipe"] = ("nvfp4", fp8_src)
        elif delayed:   # 2024 layout: [float8] scaling_type_* = "delayed" (torchao delayed scaling)
            out["recipe"] = ("delayed", t.src(delayed[0]))
        elif str(t.get("training.fp8_linear", "")).lower() == "dynamic":
            out["recipe"] = ("tensorwise", t.src("training.fp8_linear"))   # dynamic per-tensor
        else:
            key = "quantize.linear.float8.recipe_name" if t.has(
                "quantize.linear.float8.recipe_name") else "float8.recipe_name"
            out["recipe"] = (t.get(key, "tensorwise"), t.src(key, "torchao default (tensorwise)"))
            if t.has(key) and t.get(key) is None and not t.unknown(key):
                # `recipe_name: null` (a YAML, Primus's quantize.yaml): Float8LinearConverter
                # builds torchao's Float8LinearConfig(), tensorwise
                out["recipe"] = ("tensorwise", f"{t.src(key)} (null: torchao's default)")
        out["precision"] = ("bf16", fp8_src)
    _wrapping(t, out, unread)
    dims = _TT_FLAVORS.get((str(t.get("model.name")), str(t.get("model.flavor"))))
    if dims:
        out["shapes.hidden"] = (dims[0], t.src("model.flavor"))
        out["shapes.ffn"] = (dims[1], t.src("model.flavor"))
    _sequence(t, out)
    tp = t.int("parallelism.tensor_parallel_degree") or t.int("training.tensor_parallel_degree")
    if tp:
        out["shapes.tp"] = (tp, t.src("parallelism.tensor_parallel_degree"))
    # Parallel sizes (issue 16): job_config.py Parallelism defaults both degrees to 1.
    degrees: tuple[tuple[Stated, tuple[str, ...]], ...] = (
        ("tp", ("parallelism.tensor_parallel_degree", "training.tensor_parallel_degree")),
        ("cp", ("parallelism.context_parallel_degree",)))
    for name, keys in degrees:
        given = next((k for k in keys if t.has(k) and (t.get(k) is not None or
                                                      t.unknown(k))), None)
        if given is not None and t.unknown(given):
            out[name] = (t.unknown(given), t.src(given))
        elif given is None and unread is not None:
            out[name] = (unread, t.src("base_config"))
        elif given is None:
            out[name] = (1, f"torchtitan default ({keys[0]} 1)")
        elif t.int(given) is None:
            out[name] = (Unknown(f"{given} is {str(t.get(given))[:40]!r}"), t.src(given))
        else:
            out[name] = (t.int(given), t.src(given))
    # torchao's float8 / MX converters swap Linear and grouped-MM layers only; attention stays
    # in high precision (torchtitan components/quantization at v0.2.2).
    out["fp8_attention"] = (False, t.src("model.converters", "torchtitan converters"))
    if t.get("generator.class") == "VLLMGenerator":
        # torchtitan's RL controller generates with vLLM; VLLMGenerator.Config has no
        # quantization setting, only model_dtype (experiments/rl/actors/generator.py l.714-773
        # at 73aed7f6), so its rollout is never FP8
        out["rollout.engine"] = ("vllm", t.src("generator.class"))
        out["rollout.fp8"] = (False, t.src("generator.class"))
    else:
        nous_grpo.rollout(t, out)       # the Nous GRPO fork's [grpo] servers, if named
    return out.build()



FRAMEWORK = Framework(
    kind=KIND, title="torchtitan", formats=("toml", "text"), score=score,
    read=read_plain("config.torchtitan"), derive=from_torchtitan, precedence=6,
    distributions=("torchtitan",), from_source=True, rule_area="TT", area_title="torchtitan",
    shape_keys=(("seq", ("training.seq_len",)),
                ("micro_batch", ("training.local_batch_size", "training.batch_size"))),
    shape_table=model_shape, read_python=read_python,
    python_hint=re.compile(r"Trainer\.Config\b|\bJobConfig\b|\bTransformersBackendConfig\b|"
                           r"\bController\.Config\b|"
                           r"\bconfig_registry\b"),
    # `-m torchtitan.train --job.config_file X.toml --a.b v` (issue 22 item 2)
    launch=Launch(torchtitan_launch.read_text, command=torchtitan_launch.HINT,
                  heredoc_values=True),
    defaults=(
        Default("activation_checkpoint.mode", "selective", "all",
                "torchtitan/config/job_config.py"),
        Default("float8.recipe_name", "tensorwise", "all", "torchao Float8LinearConfig()"),
        Default("compile.enable", "false", "all", "torchtitan/config/job_config.py"),
    ),
)
