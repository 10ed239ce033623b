"""NeMo 2 (``nemo.collections.llm`` recipes, NeMo-Run, ``nemo.lightning``): Python jobs and their
launch lines (:mod:`.nemo2_py`, :mod:`.nemo2_launch`), and what they mean.

FP8 is the trainer's precision plugin: ``MegatronMixedPrecision(precision=..., fp8="hybrid" |
"e4m3", fp8_recipe="delayed" | "tensorwise" | "mxfp8" | "blockwise", fp8_param_gather=...)``,
usually built by a factory of ``nemo/collections/llm/recipes/precision/mixed_precision.py``
(:data:`PRESETS`, read at NVIDIA/NeMo 8cfedd72, 2025-09-19; the same fields at v2.4.0 and
v2.5.0rc0 except ``reuse_grad_buf_for_mxfp8_param_ag``, added by PR 14445, and
``nanov2_...``, PR 14483). At v2.3.0 the MXFP8 factories had ``fp8_param_gather=False``.
The plugin's defaults (fp8=None: no FP8; fp8_recipe="delayed"; fp8_param_gather=False) are in
``nemo/lightning/pytorch/plugins/mixed_precision.py`` l.102-144. A library recipe whose plugin
the job does not set keeps the recipe's own (``bf16_mixed()`` in most, an FP8 current-scaling
factory in the Nemotron-H / Nano-v2 ones): not read here, so FP8 is undetermined.

The HF AutoModel path (``HFAutoModelForCausalLM(model_accelerator=TEConfig(fp8_autocast=True))``)
swaps in TE layers and runs ``forward`` under ``te.fp8_autocast(fp8_recipe=DelayedScaling())``
(``nemo/lightning/pytorch/accelerate/transformer_engine.py`` l.99-117): TE, delayed, HYBRID.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import mcore_graphs, nemo2_launch, nemo2_py
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import LIT_PRECISION, Derived, IntentOut, Stated, View
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.types import ReaderOutput

KIND = nemo2_py.KIND
PREFIX = nemo2_py.PREFIX
FACTORY = f"{PREFIX}.perf.factory."
_GRAPHS = (f"{PREFIX}.model.config", KIND)     # Megatron-Core's fields as config.megatron.*
SOURCE = ("https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/"
          "nemo/collections/llm/recipes/precision/mixed_precision.py")
_BF16 = {"precision": "bf16-mixed"}
_FP16 = {"precision": "16-mixed"}
PRESETS: dict[str, dict[str, Any]] = {
    "bf16_mixed": _BF16, "fp16_mixed": _FP16,
    "bf16_with_fp8_mixed": {**_BF16, "fp8": "hybrid", "fp8_recipe": "delayed",
                            "fp8_param_gather": True},
    "fp16_with_fp8_mixed": {**_FP16, "fp8": "hybrid", "fp8_recipe": "delayed",
                            "fp8_param_gather": True},
    "bf16_with_mxfp8_mixed": {**_BF16, "fp8": "hybrid", "fp8_recipe": "mxfp8",
                              "fp8_param_gather": True,
                              "reuse_grad_buf_for_mxfp8_param_ag": True},
    "fp16_with_mxfp8_mixed": {**_FP16, "fp8": "hybrid", "fp8_recipe": "mxfp8",
                              "fp8_param_gather": True,
                              "reuse_grad_buf_for_mxfp8_param_ag": True},
    "bf16_with_fp8_current_scaling_mixed": {**_BF16, "fp8": "hybrid", "fp8_recipe": "tensorwise",
                                            "first_last_layers_bf16": True,
                                            "fp8_param_gather": True},
    "nemotron_h_bf16_with_fp8_current_scaling_mixed": {
        **_BF16, "fp8": "hybrid", "fp8_recipe": "tensorwise", "first_last_layers_bf16": True,
        "fp8_param_gather": True},
    "nanov2_bf16_with_fp8_current_scaling_mixed": {
        **_BF16, "fp8": "hybrid", "fp8_recipe": "blockwise", "first_last_layers_bf16": True,
        "fp8_param_gather": True},
    "fp16_with_fp8_current_scaling_mixed": {**_FP16, "fp8": "hybrid", "fp8_recipe": "tensorwise",
                                            "first_last_layers_bf16": True,
                                            "fp8_param_gather": True},
    "bf16_with_fp8_subchannel_scaling_mixed": {**_BF16, "fp8": "hybrid",
                                               "fp8_recipe": "blockwise",
                                               "fp8_param_gather": False},
    "fp16_with_fp8_subchannel_scaling_mixed": {**_FP16, "fp8": "hybrid",
                                               "fp8_recipe": "blockwise",
                                               "fp8_param_gather": False},
}
# MegatronMixedPrecision.__init__ defaults (plugins/mixed_precision.py l.102-144 @ 8cfedd72)
PLUGIN_DEFAULTS: dict[str, Any] = {"fp8": None, "fp8_recipe": "delayed", "fp8_param_gather": False,
                                   "fp4": None, "first_last_layers_bf16": False,
                                   "reuse_grad_buf_for_mxfp8_param_ag": False}
# scripts/performance/helpers.py set_precision_configs (l.211-248 @ 8cfedd72): -fr -> factory
PERF_RECIPES = {"ds": "bf16_with_fp8_mixed", "cs": "bf16_with_fp8_current_scaling_mixed",
                "mxfp8": "bf16_with_mxfp8_mixed", "ss": "bf16_with_fp8_subchannel_scaling_mixed"}
# Recipe modules whose trainer() passes plugins=bf16_mixed() and no FP8 factory
# (nemo/collections/llm/recipes/*.py @ 8cfedd72; Nemotron-H 47B/56B and Nemotron Nano 12B v2
# default to FP8 current scaling, others build the plugin from arguments: not listed)
BF16_RECIPES = frozenset({
    "baichuan2_7b", "chatglm3_6b", "deepseek", "finetune_default", "gemma3_1b", "gemma_2b",
    "gemma_7b", "gpt3_175b", "llama2_7b", "llama31_405b", "llama31_70b", "llama31_8b",
    "llama31_nemotron_70b", "llama31_nemotron_nano_8b", "llama32_1b", "llama32_3b",
    "llama3_70b", "llama3_8b", "llama4_e128", "llama4_e16", "llama_embedding_1b",
    "llama_embedding_3b", "llama_reranker_1b", "mamba2_130m", "mamba2_1_3b", "mamba2_2_7b",
    "mamba2_370m", "mamba2_780m", "mamba2_8b", "mamba2_hybrid_8b", "mistral_7b",
    "mistral_nemo_12b", "nemotron_nano_9b_v2", "nemotronh_4b", "nemotronh_8b",
    "phi3_mini_4k_instruct", "t5_11b", "t5_220m", "t5_3b"})
_RECIPES = {"delayed": "delayed", "tensorwise": "tensorwise", "mxfp8": "mxfp8",
            "blockwise": "blockwise"}
_HELPER_FACTS = (f"{PREFIX}.perf.factory.", f"{PREFIX}.perf.sets.", f"{PREFIX}.perf.defaults.")
_STRATEGIES = {"MegatronStrategy": "megatron", "FSDP2Strategy": "fsdp2", "FSDPStrategy": "fsdp1",
               "DDPStrategy": "ddp", "SingleDeviceStrategy": "none"}


def _raw(v: View, key: str) -> Any:
    """A fact as read, Unknown included (``View.get`` hides an Unknown)."""
    return v.facts.get(v.prefix + key)


def score(data: Any) -> int:
    """NeMo 2 has no config files of its own (NeMo 1.x YAML is the ``nemo`` kind)."""
    return 0


def read(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("NeMo 2 jobs are read from their Python scripts and launch lines")


def _recipe_module(recipe: Any) -> str | None:
    """``llama3_8b`` of ``llama3_8b.pretrain_recipe`` / ``recipes.llama3_8b.finetune_recipe`` /
    the CLI's ``--factory llama3_8b``."""
    if not isinstance(recipe, str):
        return None
    parts = [p for p in recipe.split(".") if p]
    if len(parts) > 1 and parts[-1].endswith(("_recipe", "_config")):
        parts = parts[:-1]
    return parts[-1] if parts else None


def _perf(v: View) -> tuple[Any, str, dict[str, Any]] | None:
    """The plugin a performance script's ``-c``/``-fr`` pick (helpers.set_precision_configs),
    where, and the fields the helper sets on it; None when the script leaves the recipe's."""
    compute = v.facts.get(f"{PREFIX}.perf.compute_dtype")
    fr = v.facts.get(f"{PREFIX}.perf.fp8_recipe")
    src = v.src("perf.compute_dtype")
    if isinstance(compute, Unknown):
        return compute, src, {}
    if str(compute).lower() != "fp8":
        return None       # bf16: the recipe's own plugin stays
    if isinstance(fr, Unknown):
        return fr, v.src("perf.fp8_recipe", src), {}
    code = "ds" if fr is None else str(fr).lower()
    where = v.src("perf.fp8_recipe", src)
    factories = {n[len(FACTORY):]: n for n in v.facts if n.startswith(FACTORY)}
    if factories:           # the job's helpers.py, read
        name = v.facts.get(factories[code]) if code in factories else None
        sets = {n.rsplit(".", 1)[-1]: val for n, val in v.facts.items()
                if n.startswith(f"{PREFIX}.perf.sets.{code}.")}
        where += f" (-fr {code}: {name}, set at {v.prov.get(factories.get(code, ''), '?')})"
        known = sorted(factories)
    else:                   # NeMo's at 8cfedd72 (helpers.py l.221-233)
        name = PERF_RECIPES.get(code)
        # l.227-229: current scaling keeps the first/last layers in FP8 for benchmarking
        sets = {"first_last_layers_bf16": False} if code == "cs" else {}
        where += f" (-fr {code}: {name}, NeMo's helpers.set_precision_configs)"
        known = sorted(PERF_RECIPES)
    if not isinstance(name, str):
        return Unknown(f"--fp8_recipe {code!r} sets no plugin the helper shows (it knows "
                       f"{', '.join(known)[:80]})"), where, {}
    return name, where, sets


def plugin(v: View) -> tuple[dict[str, Any], dict[str, str]]:
    """The precision plugin's FP8 fields (a value, or Unknown with the reason) and where each
    was decided: the recipe's plugin, replaced by the job's (or its perf-script options'), then
    the fields the job sets on it."""
    fields = ("precision", *PLUGIN_DEFAULTS)
    name: Any = v.facts.get(f"{PREFIX}.plugins")
    src = v.src("plugins")
    helper: dict[str, Any] = {}
    if name is None and v.has("perf.compute_dtype") and (perf := _perf(v)) is not None:
        name, src, helper = perf
    values: dict[str, Any]
    if name is None:
        recipe = _raw(v, "recipe")
        module = _recipe_module(recipe)
        src = v.src("recipe", src)
        if isinstance(recipe, Unknown):
            values = dict.fromkeys(fields, recipe)
        elif module in BF16_RECIPES:
            values = {**PLUGIN_DEFAULTS, **_BF16}
            src = f"{src} (the {module} recipe's trainer: plugins=bf16_mixed())"
        elif recipe is not None:
            values = dict.fromkeys(fields, Unknown(
                f"the recipe {recipe} sets trainer.plugins itself (NeMo library code, not read "
                "here; most recipes use bf16_mixed(), Nemotron-H 47B/56B and Nano-v2 12B an "
                "FP8 factory)"))
        elif (unread := v.unknown("base_config")) is not None:
            # the script a launch line runs (`python -m scripts.performance...`) was not read
            # (missing, a FIFO, outside the job: jobs/walk.py): its plugin is not known
            values = dict.fromkeys(fields, unread)   # (redteam3: "-c fp8" came out FP8 "no")
            src = v.src("base_config", src)
        else:
            values = {**PLUGIN_DEFAULTS}      # no plugin: Lightning's precision, no FP8
            fields = tuple(PLUGIN_DEFAULTS)
            src = v.src("trainer.precision", "no precision plugin given")
    elif isinstance(name, Unknown):
        values = dict.fromkeys(fields, name)
    elif name == "none":
        values, fields = {**PLUGIN_DEFAULTS}, tuple(PLUGIN_DEFAULTS)
    elif name == "MegatronMixedPrecision":
        values = {**PLUGIN_DEFAULTS,
                  "precision": Unknown("MegatronMixedPrecision(precision=) not given")}
    elif name in PRESETS:
        values = {**PLUGIN_DEFAULTS, **PRESETS[name], **helper}
    else:
        values = dict.fromkeys(fields, Unknown(
            f"plugins={name}: no precision factory of NeMo's mixed_precision.py (8cfedd72)"))
    where = dict.fromkeys(fields, src)
    if isinstance(name, Unknown) or name == "none":
        return values, where
    for key in fields:
        if v.has(f"plugins.{key}"):
            values[key] = v.facts.get(f"{PREFIX}.plugins.{key}")
            where[key] = v.src(f"plugins.{key}")
    if v.has("plugins.fp8_params") and not v.has("plugins.fp8_param_gather"):
        values["fp8_param_gather"] = v.facts.get(f"{PREFIX}.plugins.fp8_params")
        where["fp8_param_gather"] = v.src("plugins.fp8_params")
    return values, where


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    mine = [n for n in f if n.startswith(f"{PREFIX}.")]
    if mine and all(n.startswith(_HELPER_FACTS) for n in mine):
        # helpers.py / argument_parser.py read without the script that imports them
        out["fp8"] = (Unknown("only the performance scripts' helper modules were read: which "
                              "precision plugin they set depends on the -c/-fr of the script "
                              "that runs (name the launch script or the script)"),
                      prov.get(mine[0], "config"))
        return out.build()
    megatron = v.has("recipe") or v.has("plugins") or v.has("perf.compute_dtype") or \
        _raw(v, "trainer.strategy") == "MegatronStrategy"
    if v.has("model_accelerator") and not megatron:
        _accelerated(v, out)
    else:
        _plugin(v, out)
    strategy = _raw(v, "trainer.strategy")
    if isinstance(strategy, str) and strategy.rsplit(".", 1)[-1] in _STRATEGIES:
        out["distributed"] = (_STRATEGIES[strategy.rsplit(".", 1)[-1]], v.src("trainer.strategy"))
    elif megatron:
        out["distributed"] = ("megatron", v.src("recipe", v.src("plugins")))
    if megatron or out.get("distributed", (None,))[0] == "megatron":
        out.runs_on = ("megatron",)
    sizes: tuple[tuple[Stated, str], ...] = (
        ("tp", "strategy.tensor_model_parallel_size"), ("tp", "strategy.tensor_parallel_size"),
        ("cp", "strategy.context_parallel_size"), ("ep", "strategy.expert_model_parallel_size"),
        ("seq_len", "model.config.seq_length"), ("moe.experts", "model.config.num_moe_experts"),
        ("moe.top_k", "model.config.moe_router_topk"))
    for name, key in sizes:
        if v.has(key):
            raw = v.facts.get(f"{PREFIX}.{key}")
            out[name] = (raw if isinstance(raw, Unknown) else v.int(key) if v.int(key) is not None
                         else Unknown(f"{key} is {str(raw)[:40]!r}"), v.src(key))
    if v.has("strategy.sequence_parallel"):
        sp = _raw(v, "strategy.sequence_parallel")
        out["sequence_parallel"] = (sp if isinstance(sp, (bool, Unknown)) else
                                    Unknown(f"sequence_parallel={str(sp)[:40]}"),
                                    v.src("strategy.sequence_parallel"))
    _recompute(v, out)
    devices, nodes = v.int("trainer.devices"), v.int("trainer.num_nodes")
    if devices:
        out["num_gpus"] = (devices * (nodes or 1), v.src("trainer.devices"))
    return out.build()


def _plugin(v: View, out: IntentOut) -> None:
    values, where = plugin(v)
    fmt, fp4 = values.get("fp8"), values.get("fp4")
    if isinstance(fmt, Unknown) and not (isinstance(fp4, str) and fp4):
        out["fp8"] = (fmt, where["fp8"])
    elif (isinstance(fmt, str) and fmt) or (isinstance(fp4, str) and fp4):
        src = where["fp8"] if isinstance(fmt, str) and fmt else where["fp4"]
        out["fp8"] = (True, src)
        out["backend"] = ("te", src)
        if isinstance(fmt, str) and fmt:
            out["format"] = (fmt.lower() if fmt.lower() in ("hybrid", "e4m3", "e5m2") else
                             Unknown(f"fp8={fmt[:40]!r}"), where["fp8"])
            recipe = values.get("fp8_recipe")
            out["recipe"] = (recipe if isinstance(recipe, Unknown) else
                             _RECIPES.get(str(recipe)) or Unknown(f"fp8_recipe={recipe!r}"),
                             where["fp8_recipe"])
            gather = values.get("fp8_param_gather")
            out["fp8_params"] = (gather if isinstance(gather, (bool, Unknown)) else
                                 Unknown(f"fp8_param_gather={gather!r}"), where["fp8_param_gather"])
        else:
            out["recipe"] = ("nvfp4", where["fp4"])
    else:
        out["fp8"] = (False, where["fp8"])
    prec = values.get("precision")
    if prec is not None:
        out["precision"] = (prec if isinstance(prec, Unknown) else
                            LIT_PRECISION.get(str(prec)) or Unknown(f"precision {prec!r}"),
                            where.get("precision", where["fp8"]))
    elif v.has("trainer.precision"):
        _trainer_precision(v, out)


def _accelerated(v: View, out: IntentOut) -> None:
    """The HF AutoModel path: TEConfig(fp8_autocast=...) -> TE's fp8_autocast, DelayedScaling()."""
    acc = _raw(v, "model_accelerator")
    src = v.src("model_accelerator")
    if isinstance(acc, Unknown):
        out["fp8"] = (acc, src)
    elif acc == "TEConfig":
        auto = _raw(v, "model_accelerator.fp8_autocast")
        asrc = v.src("model_accelerator.fp8_autocast", src)
        out["fp8"] = (auto if isinstance(auto, (bool, Unknown)) else
                      Unknown(f"fp8_autocast={str(auto)[:40]}"), asrc)
        out["backend"] = ("te", src)
        if auto is True:
            # apply_fp8_autocast: te_recipe.DelayedScaling(**{}) -> delayed, Format.HYBRID
            out["recipe"] = ("delayed", asrc + " (NeMo apply_fp8_autocast: DelayedScaling())")
            out["format"] = ("hybrid", asrc + " (DelayedScaling's default format)")
    else:
        out["fp8"] = (False, src + f" (model_accelerator={acc})")
    if v.has("trainer.precision"):
        _trainer_precision(v, out)
    if v.has("model.enable_grad_ckpt"):
        ckpt = _raw(v, "model.enable_grad_ckpt")
        out["activation_checkpointing"] = (ckpt if isinstance(ckpt, (bool, Unknown)) else
                                           Unknown(f"enable_grad_ckpt={str(ckpt)[:40]}"),
                                           v.src("model.enable_grad_ckpt"))


def _trainer_precision(v: View, out: IntentOut) -> None:
    prec = _raw(v, "trainer.precision")
    out["precision"] = (prec if isinstance(prec, Unknown) else
                        LIT_PRECISION.get(str(prec)) or Unknown(f"trainer precision {prec!r}"),
                        v.src("trainer.precision"))


def _recompute(v: View, out: IntentOut) -> None:
    """Megatron activation recompute set on the recipe's model config."""
    if not v.has("model.config.recompute_granularity"):
        return
    gran = _raw(v, "model.config.recompute_granularity")
    src = v.src("model.config.recompute_granularity")
    if isinstance(gran, Unknown):
        out["activation_checkpointing"] = (gran, src)
    elif gran is None or str(gran) in ("none", "null"):
        out["activation_checkpointing"] = (False, src)
        out["recompute_granularity"] = ("none", src)
    elif str(gran) in ("full", "selective"):
        out["activation_checkpointing"] = (True, src)
        out["recompute_granularity"] = (str(gran), src)
    else:
        out["activation_checkpointing"] = (Unknown(f"recompute_granularity={str(gran)[:40]}"),
                                           src)


FRAMEWORK = Framework(
    kind=KIND, title="NeMo 2 (nemo.collections.llm / NeMo-Run)", formats=("python", "text"),
    score=score, read=read, derive=derive, precedence=20,
    read_python=mcore_graphs.wrapped(nemo2_py.read_python, *_GRAPHS),
    python_hint=nemo2_py.PY_HINT,
    launch=Launch(mcore_graphs.wrapped(nemo2_launch.read_text, *_GRAPHS),
                  command=nemo2_launch.COMMAND),
    defaults=(
        Default("MegatronMixedPrecision(fp8=)", "None (no FP8)", "nemo-toolkit 2.x",
                "nemo/lightning/pytorch/plugins/mixed_precision.py"),
        Default("MegatronMixedPrecision(fp8_recipe=)", "delayed", "nemo-toolkit 2.x",
                "nemo/lightning/pytorch/plugins/mixed_precision.py"),
        Default("-fr/--fp8_recipe (performance scripts)", "ds (bf16_with_fp8_mixed)",
                "nemo-toolkit 2.4-2.5", "scripts/performance/argument_parser.py"),
        Default("TEConfig(fp8_autocast=True) recipe", "DelayedScaling() (HYBRID)",
                "nemo-toolkit 2.x", "nemo/lightning/pytorch/accelerate/transformer_engine.py"),
    ),
    # NeMo's containers run it from /opt/NeMo; the megatron path's rules arrive through
    # intent.stack (derive's runs_on), the HF AutoModel path runs on no Megatron
    distributions=("nemo-toolkit",), from_source=True, rule_area="NEMOLLM",
    area_title="NeMo 2",
    shape_keys=(("seq", ("model.config.seq_length",)),
                ("tp", ("strategy.tensor_model_parallel_size",))),
)
