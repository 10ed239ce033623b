"""ArcticTraining (snowflakedb/ArcticTraining): its training YAML and the ``arctic_training
CONFIG.yaml`` launcher, which runs DeepSpeed's launcher on it (``arctic_training_cli.py``
``deepspeed_launch``; its unknown arguments go to DeepSpeed's runner).

Read at v0.8.0 (a42e5fef, its last release) and at PR 331's branch ``mwyatt/FP8-autocast``
(df2920e8, 2025-12-19, open):

- Every released config is pydantic with ``extra="forbid"`` (``arctic_training/config/base.py``
  L31-L38): a key it does not declare stops the job at config load. No release declares an
  FP8 setting, so ``model.fp8_recipe`` / ``model.fp8_target_modules`` are refused there
  (FP8D-ARCTIC-0001).
- PR 331 adds them (``config/model.py``): ``fp8_recipe`` is a mapping whose ``type`` names a
  Transformer Engine ``Recipe`` subclass, lower-cased (``delayedscaling``,
  ``float8currentscaling``, ``mxfp8blockscaling``, ``float8blockscaling``,
  ``nvfp4blockscaling``, ...), its other keys the recipe's arguments (``fp8_format`` by
  ``Format[...]``); null turns FP8 off; ``fp8_target_modules`` (required with a recipe) are name
  substrings of the ``nn.Linear`` layers swapped for ``te.Linear``
  (``model/hf_factory.py``); ``trainer/trainer.py`` runs the loss under ``te.autocast(enabled=True,
  recipe=...)``, which Transformer Engine has from 2.9 (FP8D-ARCTIC-0004).
- The trainer always runs on DeepSpeed (``config/trainer.py`` ``build_deepspeed_config``:
  ZeRO stage 2 unless ``deepspeed.zero_optimization`` says, ``bfloat16`` from ``model.dtype``).

Detection is by ArcticTraining's own keys (:mod:`._claim`): its top-level trainer keys, or
``model.fp8_recipe`` / ``model.fp8_target_modules`` / ``model.disable_activation_checkpoint``,
or a ``data.sources`` entry of one of its source types; ``model`` and ``data`` alone claim
nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks._claim import owns
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.reading.overridelaunch import Syntax, base_unread, find_launch, merged_facts
from preflight.reading.parse import Parsed
from preflight.reading.readers import read_plain
from preflight.reading.types import ReaderOutput

KIND = "arctic_training"
PREFIX = f"config.{KIND}"
_PR = "snowflakedb/ArcticTraining@df2920e8 (PR 331)"
_REL = "snowflakedb/ArcticTraining@v0.8.0"
OWN_KEYS = frozenset({
    "loss_log_interval", "train_log_iter_interval", "train_log_metrics_path",
    "activation_checkpoint_cpu_offload", "tiled_mlp_compute", "train_iters",
    "eval_log_iter_interval", "exit_iteration", "exit_iteration_this_run", "min_iterations",
    "overfit_first_batch", "mem_profiler", "mem_profiler_dir", "mem_profiler_max_entries",
    "kill_switch_path", "skip_validation",
})
"""TrainerConfig fields (config/trainer.py L70-L171 @ v0.8.0) no other trainer spells so."""
_OWN_MODEL = frozenset({"fp8_recipe", "fp8_target_modules", "disable_activation_checkpoint",
                        "hf_config_kwargs"})
_SOURCES = frozenset({"huggingface_instruct", "huggingface_causal", "snowflake",
                      "ProjectGutenbergSFT"})
"""Data source types it registers (data/*_source.py ``name = ...`` @ v0.8.0)."""
RECIPES = {"delayedscaling": "delayed", "float8currentscaling": "current",
           "mxfp8blockscaling": "mxfp8", "float8blockscaling": "blockwise",
           "nvfp4blockscaling": "nvfp4"}
"""TE recipe classes by the lower-cased name PR 331 looks them up with, and the recipe they are
(transformer_engine/common/recipe/__init__.py @ v2.9)."""
_FORMAT_DEFAULT = {"delayed": "hybrid", "current": "hybrid", "mxfp8": "e4m3",
                   "blockwise": "e4m3"}
"""Each recipe class's ``fp8_format`` default (recipe/__init__.py L200, L236, L290, L334 @ v2.9)."""
_DTYPES = {"bf16": "bf16", "bfloat16": "bf16", "bfloat": "bf16", "torch.bfloat16": "bf16",
           "fp16": "fp16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16",
           "fp32": "fp32", "float32": "fp32", "float": "fp32", "torch.float32": "fp32"}
"""config/enums.py ``DType`` aliases (v0.8.0 L28-L30)."""

ENTRY = re.compile(r"^arctic_training$|(?:^|/)arctic_training_cli\.py$")
HINT = re.compile(r"(?:^|[\s/;&|(])arctic_training(?:_cli\.py)?\s")
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)),
                value_flags=frozenset({"mode", "python_profile", "launcher", "num_gpus",
                                       "num_nodes", "include", "exclude", "hostfile",
                                       "master_port", "master_addr", "launcher_args",
                                       "node_rank", "ssh_port"}))


def _sources(data: Mapping[Any, Any]) -> bool:
    block = data.get("data")
    items = block.get("sources") if isinstance(block, dict) else None
    if not isinstance(items, list):
        return False
    return any(isinstance(s, dict) and str(s.get("type", ""))[:80] in _SOURCES
               for s in items[:256])


def score(data: Any) -> int:
    """Its own trainer keys, its model keys (FP8 of PR 331 included), or its data sources."""
    top = {str(k) for k in list(data)[:4096]}
    model = data.get("model")
    model_keys = {str(k) for k in list(model)[:4096]} if isinstance(model, dict) else set()
    own = len(top & OWN_KEYS) + len(model_keys & _OWN_MODEL) + int(_sources(data))
    if not (owns(top, OWN_KEYS) or owns(model_keys, _OWN_MODEL) or _sources(data)):
        return 0
    return 6 + 3 * own + ("deepspeed" in top) + ("model" in top) + ("data" in top)


_plain = read_plain(PREFIX)


def _recipe_type(data: Any) -> Any:
    """``config.arctic_training.fp8_recipe_type``: the lower-cased ``type`` of a recipe mapping
    (``""`` when it names none), as PR 331's validator looks it up; None: no recipe."""
    model = data.get("model") if isinstance(data, dict) else None
    recipe = model.get("fp8_recipe") if isinstance(model, dict) else None
    if not isinstance(recipe, dict):
        return None
    kind = recipe.get("type")
    if kind is None:
        return ""
    return str(kind)[:80].lower() if isinstance(kind, str) else \
        Unknown(f"fp8_recipe.type is {type(kind).__name__}, not a recipe name")


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    out = _plain(path, parsed)
    kind = _recipe_type(parsed.data)
    if kind is None:
        return out
    facts, prov = dict(out.facts), dict(out.provenance)
    name = f"{PREFIX}.fp8_recipe_type"
    facts[name] = kind
    prov[name] = prov.get(f"{PREFIX}.model.fp8_recipe.type") or Source(
        path, parsed.lines.get(("model", "fp8_recipe")))
    return ReaderOutput(facts, prov, out.problems, out.linked)


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """``arctic_training [deepspeed args] CONFIG.yaml``: the YAML it names, linked and read."""
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    # arctic_training_cli.py takes its first positional as the config whatever its name
    # (redteam7: `arctic_training train.cfg` / `train.YAML` read no config and FP8 "no")
    config = read.yaml_positional() or next(iter(read.positional), None)
    merged = merged_facts(read, KIND, config, style="paths", key="<config.yaml>")
    facts, prov = merged.facts, merged.provenance
    if config is None:
        facts[f"{PREFIX}.base_config"] = Unknown("the launch line names no config file")
        prov[f"{PREFIX}.base_config"] = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    recipe = f"{PREFIX}.model.fp8_recipe."
    if f"{PREFIX}.fp8_recipe_type" not in facts and any(k.startswith(recipe) for k in facts):
        # a config not named .yaml is merged here, not read by read_yaml: its recipe type
        kind = facts.get(f"{recipe}type", "")
        facts[f"{PREFIX}.fp8_recipe_type"] = str(kind)[:80].lower() if isinstance(kind, str) \
            else Unknown(f"fp8_recipe.type is {type(kind).__name__}, not a recipe name")
        prov[f"{PREFIX}.fp8_recipe_type"] = prov.get(f"{recipe}type") or prov.get(
            next(k for k in facts if k.startswith(recipe)), path)
    facts[f"{PREFIX}.entry"] = read.launch.entry.text
    prov[f"{PREFIX}.entry"] = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    for flag in ("num_gpus", "num_nodes"):
        got = read.flag(flag)
        if got is not None:
            facts[f"{PREFIX}.launch.{flag}"], prov[f"{PREFIX}.launch.{flag}"] = got
    return ReaderOutput(facts, prov, tuple(read.problems), merged.linked)


def _fp8(v: View, out: IntentOut) -> None:
    kind = v.facts.get(f"{PREFIX}.fp8_recipe_type")
    unread = base_unread(v.facts, KIND)
    if kind is None:
        if unread is not None:
            out["fp8"] = (unread, v.src("base_config"))
        else:
            out["fp8"] = (False, v.src("model.fp8_recipe",
                                       f"{_PR} config/model.py (fp8_recipe None: FP8 off)"))
        return
    src = v.src("fp8_recipe_type")
    out["fp8"] = (True, src)
    out["backend"] = ("te", src)
    if isinstance(kind, Unknown):
        out["recipe"] = (kind, src)
        return
    recipe = RECIPES.get(kind)
    out["recipe"] = (recipe if recipe is not None else
                     Unknown(f"fp8_recipe.type {kind!r} is none of Transformer Engine's FP8 "
                             "recipe classes"), src)
    fmt = v.get("model.fp8_recipe.fp8_format")
    if fmt is not None:
        text = str(fmt)[:20].lower()
        out["format"] = (text if text in ("hybrid", "e4m3", "e5m2") else
                         Unknown(f"fp8_format {text!r} is no Transformer Engine Format"),
                         v.src("model.fp8_recipe.fp8_format"))
    elif recipe in _FORMAT_DEFAULT:
        out["format"] = (_FORMAT_DEFAULT[recipe],
                         "NVIDIA/TransformerEngine@v2.9 common/recipe/__init__.py "
                         "(the recipe class's fp8_format default)")


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    _fp8(v, out)
    out["distributed"] = ("deepspeed", f"{_REL} arctic_training_cli.py (deepspeed launcher)")
    stage = v.int("deepspeed.zero_optimization.stage")
    if stage is not None:
        out["zero_stage"] = (stage, v.src("deepspeed.zero_optimization.stage"))
    elif not any(n.startswith(f"{PREFIX}.deepspeed.zero_optimization") for n in f):
        out.default("zero_stage", (2, f"{_REL} config/trainer.py L408-L417 (ZeRO stage 2)"))
    dtype = v.get("model.dtype")
    if dtype is not None:
        out["precision"] = (_DTYPES.get(str(dtype)[:40].lower(), Unknown(
            f"model.dtype {str(dtype)[:40]!r} is none of ArcticTraining's")), v.src("model.dtype"))
    else:
        out.default("precision", ("bf16", f"{_REL} config/model.py (dtype: DType.BF16)"))
    if v.has("model.disable_activation_checkpoint"):
        out["activation_checkpointing"] = (not v.truthy("model.disable_activation_checkpoint"),
                                           v.src("model.disable_activation_checkpoint"))
    sizes: tuple[tuple[Stated, str], ...] = (("micro_batch", "micro_batch_size"),)
    for name, key in sizes:
        n = v.int(key)
        if n is not None:
            out[name] = (n, v.src(key))
    gpus, nodes = v.int("launch.num_gpus"), v.int("launch.num_nodes")
    # DeepSpeed's runner: -1 (its default) or less is every GPU of every host (runner.py
    # --num_gpus / --num_nodes); redteam7: --num_gpus -1 was a world of -1 GPUs
    if gpus is not None and gpus > 0 and (nodes is None or nodes > 0):
        out["num_gpus"] = (gpus * (nodes or 1), v.src("launch.num_gpus"))
    out.default("compile", (False, f"{_REL} (no torch.compile setting; the trainer never "
                                   "compiles the model)"))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="ArcticTraining", formats=("yaml", "text"), score=score, read=read_yaml,
    derive=derive, precedence=25, zero_stage_rank=8,
    references=(Reference("<config.yaml>", KIND, "the launcher's positional argument, a path "
                                                 "relative to the launch directory"),),
    defaults=(
        Default("model.fp8_recipe", "None (FP8 off)", "PR 331 branch (df2920e8)",
                "arctic_training/config/model.py"),
        Default("deepspeed.zero_optimization.stage", "2", "arctic-training <= 0.8.0",
                "arctic_training/config/trainer.py"),
        Default("model.dtype", "bf16", "arctic-training <= 0.8.0",
                "arctic_training/config/model.py"),
    ),
    runs_on=("deepspeed",), distributions=("arctic-training",), from_source=True,
    rule_area="ARCTIC", area_title="ArcticTraining",
    launch=Launch(read_text, command=HINT, trains=(("arctic_training",),)),
    file_strings="words",
    file_strings_why=("pydantic (config/base.py BaseConfig) converts 'true' / 'false' to "
                      "booleans"),
    shape_keys=(("model", ("model.name_or_path",)), ("micro_batch", ("micro_batch_size",))),
)
