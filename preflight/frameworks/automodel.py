"""NeMo-Automodel: a recipe YAML (``recipe: TrainFinetuneRecipeForNextTokenPrediction``) and
its launch line ``automodel cfg.yaml --nproc-per-node 8 --a.b value``.

``nemo_automodel/cli/app.py`` (v0.5.0) takes the YAML and ``--nproc-per-node``; every other
``--key value`` / ``--key=value`` / bare ``--key`` is an override applied after loading the YAML
(``components/config/_arg_parser.py`` ``parse_cli_argv`` / ``parse_args_and_load_config``:
``cfg.set_by_dotted(key, translate_value(value))``).

Two FP8 paths, read at v0.5.0:

- ``fp8:`` (components/quantization/fp8.py, docs/guides/fp8-training.md): torchao float8
  training when ``fp8.enabled``; ``recipe_name`` tensorwise | rowwise | rowwise_with_gw_hp
  (None: tensorwise), ``filter_fqns`` modules left out, ``emulate`` for GPUs without FP8.
- ``model.backend.te_fp8`` (components/models/common/utils.py ``TEFp8Config``): present (not
  null) turns Transformer Engine FP8 on for the TE modules; ``recipe`` current (default) |
  block | mxfp8 -> Float8CurrentScaling / Float8BlockScaling / MXFP8BlockScaling.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.reading.overridelaunch import Syntax, base_unread, find_launch, merged_facts
from preflight.reading.readers import read_plain
from preflight.reading.types import ReaderOutput

KIND = "automodel"
PREFIX = f"config.{KIND}"
ENTRY = re.compile(r"^(?:automodel|nemo_automodel\.cli\.app)$|(?:^|/)nemo_automodel/[\w/]+\.py$|"
                   r"(?:^|/)examples/\w+/(?:finetune|pretrain|benchmark|train_ft)\.py$")
HINT = re.compile(r"(?:^|[\s/])automodel\s+\S+\.ya?ml|nemo_automodel[./]")
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)), all_flags=True, typing="python",
                value_flags=frozenset({"nproc-per-node", "nproc_per_node", "config", "c"}))
_RECIPES = {"current": "current", "block": "blockwise", "mxfp8": "mxfp8"}
_DTYPES = {"bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16", "fp16": "fp16",
           "float16": "fp16", "torch.float16": "fp16", "fp32": "fp32", "float32": "fp32",
           "torch.float32": "fp32"}


def score(data: Any) -> int:
    """An Automodel recipe YAML names its recipe class, or has its step scheduler and
    ``nemo_automodel`` targets."""
    top = {str(k) for k in data}
    s = 8 if "Recipe" in str(data.get("recipe", "")) else 0
    s += 2 * len(top & {"step_scheduler", "dist_env"})
    model = data.get("model")
    if isinstance(model, dict) and str(model.get("_target_", "")).startswith("nemo_automodel"):
        s += 2
    return s if s >= 4 else 0


read_yaml = read_plain(PREFIX)


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    config = read.flag("config", "c")
    if config is None:
        config = read.yaml_positional()
    merged = merged_facts(read, KIND, config, style="paths", key="<config.yaml>")
    facts, prov = merged.facts, merged.provenance
    facts[f"{PREFIX}.entry"] = read.launch.entry.text
    prov[f"{PREFIX}.entry"] = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    gpus = read.flag("nproc-per-node", "nproc_per_node")
    if gpus is not None:
        facts[f"{PREFIX}.nproc_per_node"], prov[f"{PREFIX}.nproc_per_node"] = gpus
    return ReaderOutput(facts, prov, tuple(read.problems), merged.linked)


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    te = f.get(f"{PREFIX}.model.backend.te_fp8")
    te_set = any(n.startswith(f"{PREFIX}.model.backend.te_fp8.") for n in f) or \
        (te is not None and not isinstance(te, Unknown))
    ao = f.get(f"{PREFIX}.fp8.enabled")
    unread = base_unread(f, KIND)
    if ao is None and unread is not None:
        ao = unread          # the recipe YAML was not read: its fp8 block is not known
    if te_set:
        key = "model.backend.te_fp8.recipe"
        recipe = v.get(key, "current")
        src = v.src(key, v.src("model.backend.te_fp8"))
        out["fp8"] = (True, src)
        out["backend"] = ("te", src)
        out["recipe"] = (_RECIPES.get(str(recipe), Unknown(f"te_fp8.recipe {recipe!r}")), src)
    elif isinstance(ao, Unknown):
        out["fp8"] = (ao, v.src("fp8.enabled", v.src("base_config")))
    elif v.truthy("fp8.enabled"):
        src = v.src("fp8.enabled")
        out["fp8"] = (True, src)
        out["backend"] = ("torchao", src)
        recipe = v.get("fp8.recipe_name")
        out["recipe"] = ((recipe, v.src("fp8.recipe_name")) if recipe is not None else
                         ("tensorwise", "Automodel default (recipe_name None: tensorwise)"))
    else:
        out["fp8"] = (False, v.src("fp8.enabled", "no fp8 block (FP8Config enabled=False)"))
    dtype = v.get("model.torch_dtype")
    if dtype is not None:
        out["precision"] = (_DTYPES.get(str(dtype).lower(), Unknown(f"torch_dtype {dtype!r}")),
                            v.src("model.torch_dtype"))
    if v.has("compile.enabled"):
        out["compile"] = (v.truthy("compile.enabled"), v.src("compile.enabled"))
    else:
        out["compile"] = (False, "Automodel default (no compile block)")
    strategy = str(v.get("distributed.strategy", v.get("distributed._target_", "")))
    if "fsdp2" in strategy.lower():
        out["distributed"] = ("fsdp2", v.src("distributed.strategy",
                                             v.src("distributed._target_")))
    elif strategy.lower() == "ddp" or strategy.endswith("DDPManager"):
        out["distributed"] = ("ddp", v.src("distributed.strategy", v.src("distributed._target_")))
    sizes: tuple[tuple[Stated, str], ...] = (("tp", "distributed.tp_size"),
                                             ("cp", "distributed.cp_size"),
                                             ("ep", "distributed.ep_size"),
                                             ("micro_batch", "step_scheduler.local_batch_size"))
    for name, key in sizes:
        if v.int(key) is not None:
            out[name] = (v.int(key), v.src(key))
    if v.has("distributed.sequence_parallel"):
        out["sequence_parallel"] = (v.truthy("distributed.sequence_parallel"),
                                    v.src("distributed.sequence_parallel"))
    packed = v.int("packed_sequence.packed_sequence_size")
    if packed is not None:
        out["packing"] = (packed > 0, v.src("packed_sequence.packed_sequence_size"))
        if packed > 0:
            out["seq_len"] = (packed, v.src("packed_sequence.packed_sequence_size"))
    pad = v.int("dataloader.collate_fn.pad_seq_len_divisible")
    if pad:
        out["pad_multiple"] = (pad, v.src("dataloader.collate_fn.pad_seq_len_divisible"))
    gpus = v.int("nproc_per_node")
    if gpus:
        out["num_gpus"] = (gpus, v.src("nproc_per_node"))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="NeMo-Automodel", formats=("yaml", "text"), score=score, read=read_yaml,
    derive=derive, precedence=17,
    references=(
        Reference("<config.yaml>", KIND, "relative to the launch directory (nemo_automodel/"
                                         "cli/app.py)"),
    ),
    defaults=(
        Default("fp8.recipe_name", "tensorwise (None)", "nemo-automodel 0.5.0",
                "nemo_automodel/components/quantization/fp8.py"),
        Default("model.backend.te_fp8.recipe", "current", "nemo-automodel 0.5.0",
                "nemo_automodel/components/models/common/utils.py"),
    ),
    distributions=("nemo-automodel",), rule_area="AUTOMODEL", area_title="NeMo-Automodel",
    launch=Launch(read_text, command=HINT, heredoc_values=True),
    shape_keys=(("model", ("model.pretrained_model_name_or_path",)),
                ("seq", ("packed_sequence.packed_sequence_size",)),
                ("micro_batch", ("step_scheduler.local_batch_size",)),
                ("tp", ("distributed.tp_size",))),
)
