"""torchtune: a recipe YAML (``_component_`` trees, ``checkpointer``, ``enable_fp8_training``)
and its launch line ``tune run [--nproc_per_node N] RECIPE --config CFG key=value ...``
(:mod:`.torchtune_launch`).

FP8 in torchtune, read at meta-pytorch/torchtune bd2a0fc7 (its last commit; FP8 came with
1075d9cd, after the last release v0.6.1, so only a 0.7.0 dev build has it):

- ``recipes/full_finetune_distributed.py`` L211-L212 reads ``enable_fp8_training`` (default
  False, tested for its truth) and ``fp8_recipe_name``; L617-L627 converts the model with
  torchao (``training.convert_to_float8_training``) after ``compile_model``, refusing context
  parallelism and a torch before 2.8.0.dev20250318. No other recipe reads the key: a LoRA, QAT,
  DPO or single-device recipe given ``enable_fp8_training=True`` trains in ``dtype``.
- ``torchtune/training/quantization.py`` L247-L274: ``fp8_recipe_name`` is torchao's
  ``Float8LinearConfig.from_recipe_name`` (tensorwise | rowwise | rowwise_with_gw_hp); None is
  tensorwise with ``enable_fsdp_float8_all_gather=True``; the ``output`` layer stays high precision.
- ``compile`` (bool, or a mapping whose ``model`` is True by default: L343-L355), ``dtype``
  (bf16 | fp32), ``tensor_parallel_dim``, ``context_parallel_dim``, FSDP2 (``fully_shard``) in
  every ``*_distributed`` recipe, ``enable_activation_checkpointing``, ``fsdp_cpu_offload``.

Detection is by torchtune's own keys only (:mod:`._claim`): ``output_dir``, ``seed``,
``tokenizer`` alone claim nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import torchtune_launch as tl
from preflight.frameworks._claim import owns
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.reading.overridelaunch import base_unread
from preflight.reading.parse import Parsed
from preflight.reading.readers import read_plain
from preflight.reading.types import ReaderOutput

KIND = "torchtune"
PREFIX = f"config.{KIND}"
_SRC = "meta-pytorch/torchtune@bd2a0fc7 recipes/full_finetune_distributed.py"
OWN_KEYS = frozenset({
    "enable_fp8_training", "fp8_recipe_name", "checkpointer", "fsdp_cpu_offload",
    "enable_activation_checkpointing", "enable_activation_offloading",
    "custom_sharded_layers", "optimizer_in_bwd", "max_steps_per_epoch",
    "tensor_parallel_dim", "tensor_parallel_plan", "context_parallel_dim",
    "data_parallel_shard_dim", "data_parallel_replicate_dim", "fsdp_reshard_after_forward",
    "log_peak_memory_stats", "batch_size_val", "run_val_every_n_steps",
})
"""Top-level keys only torchtune's recipes read (recipes/*.py ``cfg.get`` at bd2a0fc7)."""
_DTYPES = {"bf16": "bf16", "fp32": "fp32"}     # training/precision.py PRECISION_STR_TO_DTYPE


def _components(data: Mapping[Any, Any]) -> int:
    """How many top-level blocks name a torchtune ``_component_`` (one level down only)."""
    return sum(1 for v in list(data.values())[:256] if isinstance(v, dict) and
               str(v.get("_component_", ""))[:200].startswith("torchtune."))


def score(data: Any) -> int:
    """A recipe YAML has a key only torchtune reads; its ``torchtune.*`` components weigh."""
    top = {str(k) for k in list(data)[:4096]}
    if not owns(top, OWN_KEYS):
        return 0
    return 6 + 3 * len(top & OWN_KEYS) + 4 * _components(data)


_plain = read_plain(PREFIX)
_SWITCH = f"{PREFIX}.enable_fp8_training"


def _as_tested(out: ReaderOutput) -> ReaderOutput:
    """``enable_fp8_training`` as the recipe tests it, Python's truth (:func:`_truth`): the rules
    compare it to true, so a quoted 'false', 1 or [1] (on in the recipe) left FP8D-TUNE-0001..0006
    quiet while FP8 ran (redteam6)."""
    value = out.facts.get(_SWITCH)
    if _SWITCH not in out.facts or isinstance(value, bool):
        return out
    return replace(out, facts={**out.facts, _SWITCH: _truth(value)})


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    return _as_tested(_plain(path, parsed))


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    return _as_tested(_read_text(path, text, outer))


def _read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    found = tl.read_line(path, text, outer)
    if found is None:
        return ReaderOutput()
    line, merged = found
    facts, prov = merged.facts, merged.provenance
    assert line.launch is not None
    at = Source(path, text.count("\n", 0, line.launch.offset) + 1)
    facts[f"{PREFIX}.entry"], prov[f"{PREFIX}.entry"] = "tune run", at
    recipe = line.flag("recipe")
    if recipe is not None:
        name, src = recipe
        copied = tl.copies(text, path).get(os.path.normpath(name)) if isinstance(name, str) \
            else None
        if copied is not None and copied[0] in tl.RECIPES:
            name = copied[0]      # `tune cp full_finetune_distributed mine.py`: the package's
        facts[f"{PREFIX}.recipe"], prov[f"{PREFIX}.recipe"] = name, src
        builtin = isinstance(name, str) and name in tl.RECIPES
        facts[f"{PREFIX}.recipe_builtin"] = builtin if isinstance(name, str) else name
        prov[f"{PREFIX}.recipe_builtin"] = src
        reads: Any
        if isinstance(name, Unknown):
            reads = name
        elif builtin:
            reads = name in tl.FP8_RECIPES
        else:
            reads, _file = tl.custom_recipe(name, path)
        facts[f"{PREFIX}.recipe_reads_fp8"], prov[f"{PREFIX}.recipe_reads_fp8"] = reads, src
    gpus = line.flag("nproc_per_node", "nproc-per-node")
    if gpus is not None:
        facts[f"{PREFIX}.nproc_per_node"], prov[f"{PREFIX}.nproc_per_node"] = gpus
    nodes = line.flag("nnodes")
    if nodes is not None:
        facts[f"{PREFIX}.nnodes"], prov[f"{PREFIX}.nnodes"] = nodes
    return ReaderOutput(facts, prov, tuple(line.problems), merged.linked)


def _truth(value: Any) -> bool | Unknown:
    """``if self._enable_fp8_training:`` -- Python truth of what OmegaConf holds (a quoted
    'false' is a non-empty string: true)."""
    if isinstance(value, Unknown):
        return value
    if isinstance(value, str) and "${" in value:
        # a resolver call (`${oc.env:FP8,false}`) or a reference left unresolved: OmegaConf
        # gives its value when the recipe reads it (redteam6: the text itself, true, was FP8 on)
        return Unknown(f"{value[:80]!r} is an OmegaConf interpolation resolved when the job "
                       "runs (an environment variable or a value not read here)")
    if isinstance(value, (dict, list)) and len(value) > 0:
        return True
    return bool(value)


def _fp8(v: View, out: IntentOut) -> None:
    key = "enable_fp8_training"
    unread = base_unread(v.facts, KIND)
    raw = v.facts.get(f"{PREFIX}.{key}")
    asked = _truth(raw) if raw is not None or v.has(key) else (unread if unread else False)
    if asked is False:
        out["fp8"] = (False, v.src(key, f"{_SRC} L211 (enable_fp8_training: False)"))
        return
    src = v.src(key, v.src("base_config"))
    if isinstance(asked, Unknown):
        out["fp8"] = (asked, src)
        return
    out["fp8"] = (True, src)
    out["backend"] = ("torchao", src)
    name = v.get("fp8_recipe_name")
    if name is None:
        out["recipe"] = ("tensorwise", "torchtune training/quantization.py L266-L269 "
                                       "(fp8_recipe_name None: tensorwise)")
    elif isinstance(name, Unknown):
        out["recipe"] = (name, v.src("fp8_recipe_name"))
    else:
        text = str(name)[:60]
        out["recipe"] = (text if text in ("tensorwise", "rowwise", "rowwise_with_gw_hp") else
                         Unknown(f"fp8_recipe_name {text!r} is none of torchao's recipes"),
                         v.src("fp8_recipe_name"))
    reads = v.facts.get(f"{PREFIX}.recipe_reads_fp8")
    if reads is False:
        recipe = str(v.get("recipe"))[:80]
        out.overrides_fp8 = (True, f"{v.src('recipe')}: the recipe {recipe} never reads "
                                   "enable_fp8_training (only full_finetune_distributed does, "
                                   f"{_SRC} L211)")
    elif isinstance(reads, Unknown):
        out["fp8"] = (Unknown(f"enable_fp8_training is set, but {reads.reason}"), src)


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    _fp8(v, out)
    # (View.get gives the default for an Unknown: `compile=$C` was compile off; redteam11)
    compile_ = v.unknown("compile") or v.get("compile")
    if isinstance(compile_, Unknown):
        out["compile"] = (compile_, v.src("compile"))
    elif v.has("compile.model"):
        out["compile"] = (v.truthy("compile.model"), v.src("compile.model"))
    elif any(n.startswith(f"{PREFIX}.compile.") for n in f):
        out["compile"] = (True, v.src("compile", "compile mapping (model: True by default)"))
    elif v.has("compile"):
        out["compile"] = (_truth(compile_), v.src("compile"))
    elif (unread := base_unread(f, KIND)) is not None:
        out["compile"] = (unread, v.src("base_config"))    # the config not read may set it
    else:
        out.default("compile", (False, f"{_SRC} L343-L347 (compile unset: off)"))
    dtype = v.unknown("dtype") or v.get("dtype")
    if isinstance(dtype, Unknown):
        out["precision"] = (dtype, v.src("dtype"))
    elif dtype is not None:
        out["precision"] = (_DTYPES.get(str(dtype).lower()[:20], Unknown(
            f"dtype {str(dtype)[:40]!r} is none of torchtune's (bf16, fp32)")), v.src("dtype"))
    recipe = v.get("recipe")
    if isinstance(recipe, str) and recipe in tl.RECIPES:
        dist = "fsdp2" if "distributed" in recipe else "none"
        out["distributed"] = (dist, v.src("recipe"))
    sizes: tuple[tuple[Stated, str], ...] = (("tp", "tensor_parallel_dim"),
                                             ("cp", "context_parallel_dim"),
                                             ("micro_batch", "batch_size"),
                                             ("seq_len", "tokenizer.max_seq_len"))
    for name, key in sizes:
        n = v.int(key)
        if n is not None:
            out[name] = (n, v.src(key))
    if v.has("dataset.packed"):
        out["packing"] = (v.truthy("dataset.packed"), v.src("dataset.packed"))
    if v.has("enable_activation_checkpointing"):
        out["activation_checkpointing"] = (v.truthy("enable_activation_checkpointing"),
                                           v.src("enable_activation_checkpointing"))
    gpus, nodes = v.int("nproc_per_node"), v.int("nnodes")
    if gpus:
        out["num_gpus"] = (gpus * (nodes or 1), v.src("nproc_per_node"))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="torchtune", formats=("yaml", "text"), score=score, read=read_yaml,
    derive=derive, precedence=23,
    cancels_fp8_of=(KIND,),      # a recipe that never reads enable_fp8_training (TUNE-0001)
    references=(
        Reference("<config.yaml>", KIND, "a path relative to the launch directory, or a "
                                         "registry name read from the installed package "
                                         "(torchtune/_cli/run.py)"),
    ),
    defaults=(
        Default("enable_fp8_training", "False", "torchtune 0.7.0.dev (bd2a0fc7)",
                "recipes/full_finetune_distributed.py"),
        Default("fp8_recipe_name", "tensorwise (None)", "torchtune 0.7.0.dev (bd2a0fc7)",
                "torchtune/training/quantization.py"),
        Default("compile", "False", "torchtune 0.7.0.dev (bd2a0fc7)",
                "recipes/full_finetune_distributed.py"),
    ),
    distributions=("torchtune",), requires=("torchao",), rule_area="TUNE",
    area_title="torchtune",
    launch=Launch(read_text, command=tl.HINT),
    file_strings="truth",
    file_strings_why=("recipes read cfg.get(...) from OmegaConf and test its truth "
                      "(full_finetune_distributed.py L211, L617): a quoted 'false' is on"),
    shape_keys=(("seq", ("tokenizer.max_seq_len",)), ("micro_batch", ("batch_size",)),
                ("tp", ("tensor_parallel_dim",))),
)
