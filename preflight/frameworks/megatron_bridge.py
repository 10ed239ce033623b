"""Megatron-Bridge: ``torchrun ... scripts/training/run_recipe.py --recipe R [flags]
key=value ...`` (and the examples / tutorials that take ``--config-file X.yaml`` first).

How the config is built (read at v0.6.0, commit 51885cf1): the recipe (a Python function,
not read here) gives a ``ConfigContainer``; ``--config-file`` YAML is merged over it
(``OmegaConf.merge``, ``training/utils/omegaconf_utils.py`` ``process_config_with_overrides``);
the convenience flags (``-tp 2`` -> ``model.tensor_model_parallel_size=2``, ...) and then the
trailing ``KEY=VALUE`` overrides are applied with Hydra's parser
(``scripts/training/run_recipe.py``: ``cli_overrides = [*_common_config_overrides(args),
*trailing_overrides]``, the trailing ones win).

What decides FP8 is ``mixed_precision``: a preset name (:mod:`.megatron_bridge_presets`) or a
``MixedPrecisionConfig``. At start-up ``runtime_config_update`` copies *every* field of it onto
the model, optimizer and DDP configs whenever they differ, ``None`` included
(``training/mixed_precision.py`` ``update_config_with_precision_overrides``; its unit test
``test_update_preserves_none_values``). So ``model.fp8=e4m3`` on the launch line is replaced by
the recipe's ``mixed_precision.fp8``; every library recipe sets ``mixed_precision``
(``recipes/common.py``: ``"bf16_mixed"`` in ``_pretrain_common`` / ``_sft_common`` /
``_peft_common``). The FP8 switch that holds is ``mixed_precision=<preset>`` or
``mixed_precision.fp8=...``; a benchmark recipe's name states its preset.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import mcore_graphs, nemo_images
from preflight.frameworks import megatron_bridge_perf as perf
from preflight.frameworks import megatron_bridge_presets as presets
from preflight.frameworks import megatron_bridge_train as train
from preflight.frameworks._claim import owns
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.frameworks.megatron_bridge_mp import attention, mixed_precision
from preflight.frameworks.megatron_bridge_py import PY_HINT, read_python
from preflight.frameworks.megatron_bridge_source import recipe_attention, recipe_preset
from preflight.reading.overridelaunch import (
    LaunchRead,
    Syntax,
    find_launch,
    merged_facts,
)
from preflight.reading.overrides import parse_hydra
from preflight.reading.readers import read_plain
from preflight.reading.types import ReaderOutput

KIND = "megatron_bridge"
PREFIX = f"config.{KIND}"
ENTRY = re.compile(r"(?:^|/)run_recipe\.py$|(?:^|/)(?:examples|tutorials)/(?:recipes|models)/"
                   r"[\w./-]*\.py$")
# what a script of the job that is a Megatron-Bridge entry holds (an `examples/models/x.py` of
# another project is not one: jobs/scripts.py `_entry`)
ENTRY_CODE = re.compile(r"\bmegatron\.bridge\b|\bmegatron import bridge\b|" + perf.ENTRY_CODE.pattern
                        + "|" + train.ENTRY_CODE.pattern)
HINT = re.compile(r"run_recipe\.py|(?:examples|tutorials)/(?:recipes|models)/[\w./-]*\.py|"
                  + perf.HINT.pattern + "|" + train.HINT.pattern)
# run_recipe.py's convenience flags and the field each one sets (COMMON_OVERRIDE_FIELDS).
CONVENIENCE = {
    "max_steps": "train.train_iters", "ms": "train.train_iters",
    "global_batch_size": "train.global_batch_size", "gb": "train.global_batch_size",
    "micro_batch_size": "train.micro_batch_size", "mb": "train.micro_batch_size",
    "seq_length": "dataset.seq_length", "sl": "dataset.seq_length",
    "tensor_model_parallel_size": "model.tensor_model_parallel_size",
    "tp": "model.tensor_model_parallel_size",
    "pipeline_model_parallel_size": "model.pipeline_model_parallel_size",
    "pp": "model.pipeline_model_parallel_size",
    "context_parallel_size": "model.context_parallel_size", "cp": "model.context_parallel_size",
    "virtual_pipeline_model_parallel_size": "model.virtual_pipeline_model_parallel_size",
    "vp": "model.virtual_pipeline_model_parallel_size",
    "expert_model_parallel_size": "model.expert_model_parallel_size",
    "ep": "model.expert_model_parallel_size",
    "expert_tensor_parallel_size": "model.expert_tensor_parallel_size",
    "etp": "model.expert_tensor_parallel_size",
    "lr": "optimizer.lr", "min_lr": "optimizer.min_lr",
    "warmup_iters": "scheduler.lr_warmup_iters",
}
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)), value_flags=frozenset({
    "recipe", "model", "mode", "dataset", "step-func", "step_func", "config-file", "config_file",
    "peft_scheme", "hf_path", "pretrained_checkpoint", "save_dir", "load_dir", "save_interval",
    *CONVENIENCE}))
_TASK = {"pretrain": "pretrain", "sft": "sft", "lora": "peft", "dora": "peft",
         "finetune": "sft"}

_TRAIN_OWN = frozenset({"train_iters", "eval_iters", "eval_interval", "manual_gc",
                        "manual_gc_interval", "exit_signal_handler", "skip_train"})
"""Megatron-Bridge TrainingConfig fields (megatron/bridge/training/config.py at v0.2.0) that
claim a ``train:`` section; ConfigContainer's ``ddp``, ``dist``, ``rng``, ``comm_overlap``
sections claim the file too."""


def score(data: Any) -> int:
    """A ``--config-file`` YAML: ConfigContainer sections, ``train`` among them."""
    top = {str(k) for k in data}
    if "train" not in top or "trainer" in top:
        return 0
    train = data.get("train")
    if not owns(top, {"ddp", "dist", "rng", "comm_overlap"}) and not (
            isinstance(train, dict) and owns(map(str, train), _TRAIN_OWN)):
        return 0   # `train:` and `checkpoint:` are any trainer's (frameworks/_claim.py)
    return 2 * len(top & {"train", "ddp", "dist", "rng", "scheduler", "mixed_precision",
                          "comm_overlap", "checkpoint", "logger", "tokenizer"})


# the model's Megatron-Core CUDA-graph settings also as config.megatron.* (the performance
# launcher's --cuda_graph_impl / --cuda_graph_scope where no model.* override sets them)
_GRAPHS = (f"{PREFIX}.model", KIND, {"cuda_graph_impl": f"{PREFIX}.perf.cuda_graph_impl",
                                     "cuda_graph_scope": f"{PREFIX}.perf.cuda_graph_scope"})
read_yaml = mcore_graphs.wrapped(read_plain(PREFIX), *_GRAPHS)


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """A Megatron-Bridge launch script, with the versions it pins (its NeMo container)."""
    return nemo_images.with_pins(path, text, _read_text(path, text, outer))


def _read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    read = find_launch(path, text, SYNTAX, outer)
    slurm: dict[str, tuple[Any, Source]] = {}
    if read.launch is None:
        launcher = find_launch(path, text, perf.SYNTAX, outer)
        if launcher.launch is not None:
            return _read_perf(path, text, launcher)
        # scripts/training/train.sh -> setup_experiment.py: run_recipe.py's words, less its own
        launcher = find_launch(path, text, train.syntax(SYNTAX), outer)
        if launcher.launch is None or train.confirmed(path, launcher) is not None:
            return ReaderOutput(problems=tuple(read.problems))
        read, slurm = launcher, train.drop_launcher_flags(launcher)
    assert read.launch is not None
    # the convenience flags become overrides that the trailing ones can still override
    flags = [(CONVENIENCE[k], v) for k, v in read.flags.items() if k in CONVENIENCE]
    convenience = []
    for key, (value, src) in flags:
        why = value.reason if isinstance(value, Unknown) else None
        convenience.append((parse_hydra(f"{key}={value}", why), src))
    read.overrides[:0] = convenience
    merged = merged_facts(read, KIND, read.flag("config-file", "config_file"),
                          style="paths", key="--config-file")
    facts, prov = merged.facts, merged.provenance
    recipe = read.flag("recipe")
    model, mode = read.flag("model"), read.flag("mode")
    if recipe is None and model is not None and isinstance(model[0], str):
        task = _TASK.get(str(mode[0]) if mode else "", "pretrain")
        recipe = (f"{model[0]}_{task}_config", model[1])
    if recipe is not None:
        facts[f"{PREFIX}.recipe"], prov[f"{PREFIX}.recipe"] = recipe
        if isinstance(recipe[0], str) and (own := recipe_preset(path, recipe[0])) is not None:
            # the job's own Megatron-Bridge source: its recipe's preset, not the table's
            facts[f"{PREFIX}.recipe_preset"] = own[0]
            prov[f"{PREFIX}.recipe_preset"] = Source(own[1], own[2])
        if isinstance(recipe[0], str):      # its FP8 attention, set in the recipe's body
            for field, (value, file, line) in recipe_attention(path, recipe[0]).items():
                name = f"{PREFIX}.recipe_{field}"
                facts[name] = value if isinstance(value, bool) else Unknown(str(value))
                prov[name] = Source(file, line)
    facts[f"{PREFIX}.entry"] = read.launch.entry.text
    prov[f"{PREFIX}.entry"] = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    for name, (value, src) in slurm.items():    # the Slurm launcher's own options
        facts[f"{PREFIX}.launcher.{name}"], prov[f"{PREFIX}.launcher.{name}"] = value, src
    return ReaderOutput(facts, prov, tuple(read.problems), merged.linked)


def _read_perf(path: str, text: str, read: LaunchRead) -> ReaderOutput:
    """The performance launcher (:mod:`.megatron_bridge_perf`): its ``-c`` preset, then the
    ``key=value`` words it forwards to the rank-local script's Hydra overrides, which win."""
    assert read.launch is not None
    line = text.count("\n", 0, read.launch.offset) + 1
    facts, prov, problems = perf.facts(read, PREFIX, line)
    merged = merged_facts(read, KIND, None, style="paths", key="--config-file")
    facts.update(merged.facts)
    prov.update(merged.provenance)
    return ReaderOutput(facts, prov, tuple(read.problems) + tuple(problems), merged.linked)


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    out["distributed"] = ("megatron", v.src("entry", prov.get("config.files", "config")))
    if v.truthy("dist.use_torch_fsdp2"):
        out["distributed"] = ("fsdp2", v.src("dist.use_torch_fsdp2"))
    values, where = mixed_precision(v)
    fmt, fp4 = values["fp8"], values["fp4"]
    replaced = [k for k in ("model.fp8", "model.fp8_recipe", "model.fp8_param_gather",
                            "ddp.fp8_param_gather") if v.has(k)]
    note = (f"; {', '.join(replaced)} ({v.src(replaced[0])}) "
            f"{'is' if len(replaced) == 1 else 'are'} replaced by mixed_precision at start-up "
            "(training/mixed_precision.py update_config_with_precision_overrides)"
            if replaced else "")
    if isinstance(fmt, Unknown) and not (isinstance(fp4, str) and fp4):
        out["fp8"] = (Unknown(fmt.reason + note), where["fp8"])
    elif (isinstance(fmt, str) and fmt) or (isinstance(fp4, str) and fp4):
        src = where["fp8"] if isinstance(fmt, str) and fmt else where["fp4"]
        out["fp8"] = (True, src)
        out["backend"] = ("te", src)
        if isinstance(fmt, str) and fmt:
            out["format"] = (fmt.lower(), where["fp8"])
            out["recipe"] = (values["fp8_recipe"], where["fp8_recipe"])
            out["fp8_params"] = (values["fp8_param_gather"], where["fp8_param_gather"])
        else:
            out["recipe"] = ("nvfp4", where["fp4"])
    elif _asks(v.get("model.fp8")):
        # FP8 asked on the model config and reset by the recipe's mixed_precision at start-up:
        # asked and overridden (intent.fp8_source / fp8_overridden_by), not "not asked"
        # (Megatron-Bridge's own nemotron_3 nano FSDP example; held-out set 4)
        out["fp8"] = (True, v.src("model.fp8"))
        out.overrides_fp8 = (True, where["fp8"] + note)
    else:
        out["fp8"] = (False, where["fp8"] + note if note else where["fp8"])
    prec = values["precision"]
    out["precision"] = (prec, where["precision"])
    out["fp8_attention"] = attention(v, values, where)
    sizes: tuple[tuple[Stated, str], ...] = (("tp", "model.tensor_model_parallel_size"),
                                             ("cp", "model.context_parallel_size"),
                                             ("ep", "model.expert_model_parallel_size"),
                                             ("micro_batch", "train.micro_batch_size"),
                                             ("moe.experts", "model.num_moe_experts"),
                                             ("moe.top_k", "model.moe_router_topk"))
    for name, key in sizes:
        if v.has(key):
            out[name] = (_num(v, key), v.src(key))
    seq_key = "dataset.seq_length" if v.has("dataset.seq_length") else "model.seq_length"
    if v.int(seq_key):
        out["seq_len"] = (v.int(seq_key), v.src(seq_key))
    if v.has("model.sequence_parallel"):
        out["sequence_parallel"] = (v.truthy("model.sequence_parallel") and
                                    out.get("tp", (1,))[0] != 1, v.src("model.sequence_parallel"))
    return out.build()


def _num(v: View, key: str) -> Any:
    """An integer setting, the reader's ``Unknown`` (``$TP`` set at run time), or ``Unknown``
    naming the value that is no integer."""
    raw = v.facts.get(v.prefix + key)
    if isinstance(raw, Unknown):
        return raw
    value = v.int(key)
    return value if value is not None else Unknown(f"{key} is {str(raw)[:40]!r}, not a number")


def _asks(value: Any) -> bool:
    """``model.fp8`` set to an FP8 format (``e4m3``, ``hybrid``), not None / false."""
    return isinstance(value, str) and value.strip().lower() in ("e4m3", "e5m2", "hybrid")


FRAMEWORK = Framework(
    kind=KIND, title="Megatron-Bridge", formats=("yaml", "text", "python"), score=score,
    read=read_yaml, read_python=mcore_graphs.wrapped(read_python, *_GRAPHS),
    python_hint=PY_HINT,
    derive=derive, precedence=14,
    cancels_fp8_of=(KIND,),          # its recipe's mixed_precision resets model.fp8 (MBR-0001)
    duplicate_keys="error",          # OmegaConf.load refuses a key given twice
    references=(
        Reference("--config-file", KIND, "relative to the launch directory; merged over the "
                                         "recipe, under the command-line overrides"),
    ),
    defaults=(
        Default("mixed_precision", "bf16_mixed (library recipes)", "megatron-bridge 0.6.0",
                "src/megatron/bridge/recipes/common.py"),
        Default("mixed_precision.fp8_recipe", "tensorwise", "megatron-bridge 0.6.0",
                presets.SOURCE),
    ),
    runs_on=("megatron",),
    distributions=("megatron-bridge",), requires=("megatron-core",),
    # NVIDIA's containers run it from /opt/Megatron-Bridge (PYTHONPATH=.../src)
    from_source=True, rule_area="MBR", area_title="Megatron-Bridge",
    launch=Launch(mcore_graphs.wrapped(read_text, *_GRAPHS), command=HINT, entry=ENTRY_CODE,
                  heredoc_values=True),
    shape_keys=(("heads", ("model.num_attention_heads",)),
                ("kv_heads", ("model.num_query_groups",)), ("layers", ("model.num_layers",)),
                ("seq", ("dataset.seq_length", "model.seq_length")),
                ("micro_batch", ("train.micro_batch_size",)),
                ("tp", ("model.tensor_model_parallel_size",))),
    # the bool fields intent reads (MixedPrecisionConfig, training/mixed_precision.py l.41-61;
    # DistributedInitConfig.use_torch_fsdp2; ModelParallelConfig.sequence_parallel @ v0.6.0)
    bool_keys=("mixed_precision.bf16", "mixed_precision.fp16", "mixed_precision.fp8_param_gather",
               "mixed_precision.fp8_dot_product_attention",
               "mixed_precision.fp8_multi_head_attention", "model.fp8_dot_product_attention",
               "model.fp8_multi_head_attention",
               "mixed_precision.first_last_layers_bf16", "dist.use_torch_fsdp2",
               "model.sequence_parallel"),
    # the --config-file YAML and the key=value overrides (recipe_runner.apply_cli_overrides ->
    # process_config_with_overrides) and a script's own `cfg.x = "false"` all reach the
    # dataclass unchanged (_apply_overrides: setattr, only torch.dtype / callables converted),
    # where `if cfg.bf16:` tests the string's truth: 'false' is on, for every boolean key
    file_strings="truth", cli_strings="truth", python_strings="truth",
    file_strings_why=(
        "Megatron-Bridge merges the YAML into an OmegaConf config built from a plain dict and "
        "sets each value on its dataclasses unchanged (src/megatron/bridge/training/utils/"
        "omegaconf_utils.py l.68-78, 454-516 @ v0.6.0; scripts/training/recipe_runner.py "
        "l.293-297): a bool field then tests its truth (on), a str field such as model.fp8 is "
        "refused by Megatron-Core"),
)
