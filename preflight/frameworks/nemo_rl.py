"""NeMo-RL: ``uv run examples/run_grpo.py --config cfg.yaml policy.x=y ...`` and its YAML.

``examples/run_*.py`` (v0.7.0) load ``--config`` with ``load_config`` (the YAML over the files
its ``defaults:`` names, relative to its folder, ``_override_: true`` replacing a section:
nemo_rl/utils/config.py ``load_config_with_inheritance``), then apply the rest of the command
line with ``parse_hydra_overrides`` (Hydra's override parser, struct mode), then resolve
``${...}``. :mod:`preflight.reading.layered` does the same.

FP8 (docs/fp8.md at v0.7.0; nemo_rl/models/megatron/setup.py): training in FP8 only on the
Megatron path (``policy.megatron_cfg.enabled``) with ``policy.megatron_cfg.fp8_cfg.enabled``,
whose ``fp8`` / ``fp8_recipe`` / ``fp8_param`` become the TransformerConfig's (Transformer
Engine); generation in FP8 with ``policy.generation.vllm_cfg.precision: fp8`` (DeepSeek-style
block scaling, 128x128 weight blocks: nemo_rl/models/generation/vllm/quantization/fp8.py) and
an FP8 KV cache with ``vllm_cfg.kv_cache_dtype: fp8`` (which needs ``precision: fp8``).
Without ``megatron_cfg.enabled`` the policy trains with DTensor (FSDP2) in
``policy.precision``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import kvformat, nemo_rl_dynamo, nemo_rl_qarl
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.frameworks.nemo_rl_detect import score
from preflight.frameworks.nemo_rl_shipped import fill_unread, lookup, shipped_config
from preflight.frameworks.nemo_rl_source import with_source
from preflight.reading.launch import not_training
from preflight.reading.layered import load_chain, source_of
from preflight.reading.overridelaunch import (
    LaunchRead,
    Syntax,
    base_unread,
    find_launch,
    merged_facts,
)
from preflight.reading.parse import Parsed
from preflight.reading.refs import named
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

KIND = "nemo_rl"
PREFIX = f"config.{KIND}"
ENTRY = re.compile(r"(?:^|/)run_(?:grpo|sft|dpo|rm|ppo|distillation|vlm_grpo|vlm_sft|"
                   r"xtoken_off_policy_distillation|eval)\w*\.py$|"
                   r"(?:^|/)examples/(?:converters/convert|modelopt/export)_\w+\.py$")
# NeMo-RL's examples/run_*.py, or any run_<algorithm>*.py given --config (a TRL or HF script
# named run_sft.py takes --output_dir and TrainingArguments instead). Its entry points that do not
# train (v0.7.0): examples/run_eval.py (vLLM generation over an eval set, nemo_rl/evals/eval.py),
# examples/converters/convert_*_to_hf.py (a checkpoint to HF; its --config is the checkpoint's
# training config.yaml) and examples/modelopt/export_quantized_to_hf.py.
HINT = re.compile(r"examples/run_(?:grpo|sft|dpo|rm|ppo|distillation|vlm_grpo|vlm_sft|eval)"
                  r"\w*\.py\b|examples/(?:converters/convert|modelopt/export)_\w+\.py\b|"
                  r"run_(?:grpo|sft|dpo|rm|ppo|distillation|vlm_grpo|vlm_sft|eval)\w*\.py"
                  r"(?:[ \t]|\\\n)+--config\b")
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)), value_flags=frozenset({"config"}))
MEG = "policy.megatron_cfg"
FP8 = f"{MEG}.fp8_cfg"
VLLM = "policy.generation.vllm_cfg"
BASE_DECIDES = (f"{MEG}.enabled", f"{FP8}.enabled", f"{FP8}.fp8", f"{FP8}.fp8_recipe",
                f"{FP8}.fp8_param", f"{MEG}.tensor_model_parallel_size",
                f"{MEG}.context_parallel_size", f"{MEG}.sequence_parallel",
                "policy.sequence_packing.enabled", "policy.dtensor_cfg.enabled",
                "policy.generation.backend", f"{VLLM}.precision", f"{VLLM}.kv_cache_dtype",
                "policy.precision")
"""Settings a base file not read would decide: Unknown with its reason where the job does not
state them (every recipe of grpo_math_1B.yaml's tree inherits fp8_cfg, TP and packing from it)."""
_DTYPES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16",
           "float32": "fp32", "fp32": "fp32"}


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    """The YAML over its ``defaults:`` chain, ``${...}`` resolved on the merged config."""
    chain = load_chain(path, parsed, style="paths")
    facts, prov = chain.facts(PREFIX, Source(path, parsed.line_of(("defaults",))))
    shipped = lookup(chain.unread_paths[0]) if len(chain.unread_paths) == 1 and \
        len(chain.unread) == 1 else None
    if shipped is not None:
        # the base not read is one NeMo-RL ships: derive takes what it sets from the table
        facts[f"{PREFIX}.shipped_base"] = shipped.path
        prov[f"{PREFIX}.shipped_base"] = prov[f"{PREFIX}.base_config"]
    where = source_of(path, parsed)(("defaults",))
    linked = tuple(Linked(p, KIND, where, key="defaults", line=parsed.line_of(("defaults",)))
                   for p in chain.files)
    return with_source(path, nemo_rl_qarl.apply(path, ReaderOutput(facts, prov, tuple(
        chain.problems), linked)))


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """The ``examples/run_*.py --config X`` launch line, its overrides over X."""
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is not None and not_training(read.launch.entry.text):
        return _not_training(path, text, read)
    if read.launch is None or (read.flag("config") is None and not read.overrides):
        # not NeMo-RL's command line (no --config, no overrides): left to the other readers
        return ReaderOutput(problems=tuple(read.problems))
    merged = merged_facts(read, KIND, read.flag("config"), style="paths", key="--config")
    facts, prov = merged.facts, merged.provenance
    shipped_config(read.flag("config"), facts, prov, PREFIX)
    line = text.count("\n", 0, read.launch.offset) + 1
    facts[f"{PREFIX}.entry"] = read.launch.entry.text
    prov[f"{PREFIX}.entry"] = Source(path, line)
    return with_source(path, nemo_rl_qarl.apply(path, ReaderOutput(facts, prov, tuple(
        read.problems), merged.linked)))


def _not_training(path: str, text: str, read: LaunchRead) -> ReaderOutput:
    """A launch script whose only NeMo-RL command evaluates, converts or exports (find_launch
    takes a training command first): the job does not train, so ``config.nemo_rl.trains`` is
    false and its ``--config`` (an eval config, or the checkpoint's training config) belongs to
    the job without being its training config; Unknown where the entry point is chosen by a
    branch that may not run."""
    assert read.launch is not None
    entry = read.launch.entry
    where = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    trains: Any = False
    if entry.conditional is not None:
        trains = Unknown(f"{entry.text} is set in an if/case branch at line "
                         f"{text.count(chr(10), 0, entry.conditional) + 1} that may not run: "
                         "another entry point, one that trains, may run instead")
    facts: dict[str, Any] = {f"{PREFIX}.entry": entry.text, f"{PREFIX}.trains": trains}
    prov: dict[str, str] = {f"{PREFIX}.entry": where, f"{PREFIX}.trains": where}
    problems = list(read.problems)
    if trains is False:
        problems.append(ConfigProblem(path, where.line, (
            f"this script runs NeMo-RL's {entry.text.rsplit('/', 1)[-1]}, which evaluates, "
            "converts or exports a model and does not train it: no FP8 training check applies "
            "to this job"), level="info", code="not_training", fix=(
            "To check the training job, give the script (or YAML) that runs examples/run_grpo.py "
            "or another training entry point.")))
    given = read.flag("config")
    linked: tuple[Linked, ...] = ()
    if given is not None and isinstance(given[0], str):
        link = named(given[0], KIND, path, given[1], key="--config", line=given[1].line)
        linked = (replace(link, after=True),)
    return ReaderOutput(facts, prov, tuple(problems), linked)


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    trains = f.get(f"{PREFIX}.trains")
    if trains is False or isinstance(trains, Unknown):
        # an eval / conversion entry point: nothing here trains, so nothing about FP8 training
        # is stated (the eval config's vLLM precision is not an RL rollout's)
        out["fp8"] = (trains if isinstance(trains, Unknown) else False, v.src("trains"))
        return out.build()
    unread = base_unread(f, KIND)
    if unread is not None:
        f, prov = fill_unread(f, prov, unread, PREFIX, BASE_DECIDES)
        v = View(f, KIND, prov)
    megatron = v.truthy(f"{MEG}.enabled")
    dtensor = v.truthy("policy.dtensor_cfg.enabled")
    if megatron:
        out["distributed"] = ("megatron", v.src(f"{MEG}.enabled"))
        # the Megatron policy worker builds a Megatron-Core model (models/megatron/setup.py at
        # v0.7.0): Megatron's rules reach the job through intent.stack
        out.runs_on = ("megatron",)
    elif dtensor:
        out["distributed"] = ("fsdp2", v.src("policy.dtensor_cfg.enabled"))
    fp8_on = f.get(f"{PREFIX}.{FP8}.enabled")
    meg_on = f.get(f"{PREFIX}.{MEG}.enabled")
    if isinstance(fp8_on, Unknown):
        out["fp8"] = (fp8_on, v.src(f"{FP8}.enabled"))
    elif isinstance(meg_on, Unknown) and v.truthy(f"{FP8}.enabled"):
        # FP8 is asked, but fp8_cfg is read on the Megatron path only (models/megatron/
        # setup.py l.576, data.py l.1123 @ v0.7.0; the DTensor worker never reads it), and
        # policy.megatron_cfg.enabled is the base's
        out["fp8"] = (Unknown(f"{FP8}.enabled is true ({v.src(f'{FP8}.enabled')}), but NeMo-RL "
                              "applies fp8_cfg only when policy.megatron_cfg.enabled is true "
                              f"(the DTensor path ignores it), and that is not known: "
                              f"{meg_on.reason}"), v.src(f"{FP8}.enabled"))
    elif v.truthy(f"{FP8}.enabled") and megatron:
        src = v.src(f"{FP8}.enabled")
        out["fp8"] = (True, src)
        out["backend"] = ("te", src)
        fmt = v.get(f"{FP8}.fp8")
        out["format"] = (str(fmt).lower() if fmt is not None else v.unknown(f"{FP8}.fp8") or
                         Unknown("fp8_cfg.fp8 is not set (NeMo-RL raises KeyError)"),
                         v.src(f"{FP8}.fp8", src))
        recipe = v.get(f"{FP8}.fp8_recipe")
        out["recipe"] = (recipe if recipe is not None else v.unknown(f"{FP8}.fp8_recipe") or
                         Unknown("fp8_cfg.fp8_recipe is not set (NeMo-RL raises KeyError)"),
                         v.src(f"{FP8}.fp8_recipe", src))
        out["fp8_params"] = (v.unknown(f"{FP8}.fp8_param") or v.truthy(f"{FP8}.fp8_param"),
                             v.src(f"{FP8}.fp8_param", src))
    elif v.truthy(f"{FP8}.enabled"):
        out["fp8"] = (False, v.src(f"{MEG}.enabled", "policy.megatron_cfg.enabled is not "
                                                     "set: fp8_cfg applies to the Megatron "
                                                     "path only"))
    else:
        out["fp8"] = (False, v.src(f"{FP8}.enabled", "no policy.megatron_cfg.fp8_cfg"))
    prec = v.get("policy.precision")
    if prec is not None:
        out["precision"] = (_DTYPES.get(str(prec).lower(), Unknown(f"policy.precision {prec!r}")),
                            v.src("policy.precision"))
    _parallel(v, out, megatron)
    seq = v.int("policy.max_total_sequence_length")
    if seq:
        out["seq_len"] = (seq, v.src("policy.max_total_sequence_length"))
    mb = v.int("policy.train_micro_batch_size")
    if mb:
        out["micro_batch"] = (mb, v.src("policy.train_micro_batch_size"))
    if v.has("policy.sequence_packing.enabled"):
        out["packing"] = (v.unknown("policy.sequence_packing.enabled") or
                          v.truthy("policy.sequence_packing.enabled"),
                          v.src("policy.sequence_packing.enabled"))
    pad = v.get("policy.make_sequence_length_divisible_by")
    if pad is not None:
        out["pad_multiple"] = (v.int("policy.make_sequence_length_divisible_by") or
                               Unknown(f"make_sequence_length_divisible_by is "
                                       f"{str(pad)[:60]!r}"),
                               v.src("policy.make_sequence_length_divisible_by"))
    fp32 = f.get(f"{PREFIX}.{MEG}.env_vars.NVTE_FP8_BLOCK_SCALING_FP32_SCALES")
    if megatron and fp32 is not None:
        # megatron_cfg.env_vars go into the Megatron policy workers' environment
        # (examples/configs/grpo_math_8B_megatron_fp8.yaml at v0.7.0 sets this one)
        out["block_scales_fp32"] = (fp32 if isinstance(fp32, Unknown) else str(fp32) == "1",
                                    v.src(f"{MEG}.env_vars.NVTE_FP8_BLOCK_SCALING_FP32_SCALES"))
    if megatron and out.get("packing", (False,))[0] is True:
        _packed_row_padding(v, out)
    gpus, nodes = v.int("cluster.gpus_per_node"), v.int("cluster.num_nodes")
    if gpus:
        out["num_gpus"] = (gpus * (nodes or 1), v.src("cluster.gpus_per_node"))
    _generation(v, out)
    return out.build()


def _packed_row_padding(v: View, out: IntentOut) -> None:
    """On the Megatron path NeMo-RL pads each packed row by itself: to 128 tokens for blockwise
    FP8, 32 for MXFP8, 16 for other FP8 recipes (128 for the HybridEP flex dispatcher), times
    ``2 x CP`` and TP under sequence parallelism (nemo_rl/models/megatron/data.py
    ``_get_pack_sequence_parameters_for_megatron`` at v0.7.0; PR 1884)."""
    divisor = 1
    if out.get("fp8", (False,))[0] is True:
        recipe = out.get("recipe", (None,))[0]
        if isinstance(recipe, Unknown):
            # the multiple depends on the recipe: not 16 by default
            out["pad_multiple"] = (recipe, out["recipe"][1])
            return
        divisor = 128 if recipe == "blockwise" else 32 if recipe == "mxfp8" else 16
    if v.get(f"{MEG}.moe_token_dispatcher_type") == "flex" and \
            v.get(f"{MEG}.moe_flex_dispatcher_backend") == "hybridep":
        divisor = max(divisor, 128)
    if divisor == 1:
        return
    tp, cp = out.get("tp", (1,))[0], out.get("cp", (1,))[0]
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (tp, cp)):
        return
    multiple = divisor * (2 * cp if cp > 1 else 1) * (
        tp if tp > 1 and out.get("sequence_parallel", (False,))[0] is True else 1)
    out["pad_multiple"] = (multiple, f"{v.src(f'{FP8}.fp8_recipe', v.src(f'{MEG}.enabled'))} "
                                     "(NeMo-RL pads packed rows for the FP8 recipe: "
                                     "models/megatron/data.py at v0.7.0)")


def _parallel(v: View, out: IntentOut, megatron: bool) -> None:
    root = MEG if megatron else "policy.dtensor_cfg"
    keys: tuple[tuple[Stated, str], ...] = (
        ("tp", "tensor_model_parallel_size" if megatron else "tensor_parallel_size"),
        ("cp", "context_parallel_size"))
    for name, key in keys:
        if v.has(f"{root}.{key}"):
            value = v.int(f"{root}.{key}")
            out[name] = (value if value is not None else v.unknown(f"{root}.{key}") or
                         Unknown(f"{key} is {str(v.get(f'{root}.{key}'))[:40]!r}"),
                         v.src(f"{root}.{key}"))
    if megatron:
        if v.has(f"{MEG}.expert_model_parallel_size"):
            out["ep"] = (v.int(f"{MEG}.expert_model_parallel_size") or
                         Unknown("expert_model_parallel_size is not a number"),
                         v.src(f"{MEG}.expert_model_parallel_size"))
        if v.has(f"{MEG}.sequence_parallel"):
            out["sequence_parallel"] = (v.unknown(f"{MEG}.sequence_parallel") or
                                        v.truthy(f"{MEG}.sequence_parallel") and
                                        out.get("tp", (1,))[0] != 1,
                                        v.src(f"{MEG}.sequence_parallel"))
        ac = v.get(f"{MEG}.activation_checkpointing")
        if ac is not None:
            on = v.truthy(f"{MEG}.activation_checkpointing")
            out["activation_checkpointing"] = (on, v.src(f"{MEG}.activation_checkpointing"))
            # models/megatron/setup.py _apply_performance_config at v0.7.0: granularity "full"
            # unless megatron_cfg.recompute_granularity says "selective"
            gran = str(v.get(f"{MEG}.recompute_granularity", "full")).lower() if on else "none"
            out["recompute_granularity"] = (gran if gran in {"full", "selective", "none"} else
                                            Unknown(f"recompute_granularity {gran[:40]!r}"),
                                            v.src(f"{MEG}.recompute_granularity",
                                                  v.src(f"{MEG}.activation_checkpointing")))
        # only fp8 / fp8_recipe / fp8_param of fp8_cfg reach the TransformerConfig (setup.py at
        # v0.7.0): attention stays out of FP8 (TransformerConfig fp8_dot_product_attention False)
        out["fp8_attention"] = (False, v.src(f"{FP8}.enabled", "NeMo-RL sets no FP8 attention"))


def _generation(v: View, out: IntentOut) -> None:
    raw = v.facts.get(f"{PREFIX}.policy.generation.backend")
    precision = v.facts.get(f"{PREFIX}.{VLLM}.precision")
    if (raw is None or isinstance(raw, Unknown)) and isinstance(precision, str):
        # the job sets vllm_cfg.precision while generation.backend is in a base file not read
        # (or left out): vllm_cfg is the vLLM generation section, so the job generates with vLLM
        backend, src = "vllm", v.src(f"{VLLM}.precision")
    elif isinstance(raw, Unknown):
        out["rollout.engine"] = (raw, v.src("policy.generation.backend"))
        out["rollout.fp8"] = (raw, v.src("policy.generation.backend"))
        return
    else:
        backend, src = v.get("policy.generation.backend"), v.src("policy.generation.backend")
    if backend is None:
        return           # SFT / DPO: no generation
    engine = str(backend).lower()
    out["rollout.engine"] = (engine if engine in {"vllm", "sglang", "megatron"} else
                             Unknown(f"generation backend {backend!r}"), src)
    isc = v.facts.get(f"{PREFIX}.loss_fn.use_importance_sampling_correction")
    out["rollout.is_correction"] = (
        isc if isinstance(isc, Unknown) else
        Unknown(base.reason) if isc is None and (base := base_unread(v.facts, KIND)) else
        v.truthy("loss_fn.use_importance_sampling_correction"),
        v.src("loss_fn.use_importance_sampling_correction",
              "NeMo-RL default (use_importance_sampling_correction false)"))
    if engine == "vllm":
        prec = v.facts.get(f"{PREFIX}.{VLLM}.precision")
        fp8 = str(prec).lower() == "fp8"
        out["rollout.fp8"] = (prec if isinstance(prec, Unknown) else fp8,
                              v.src(f"{VLLM}.precision", src))
        if fp8:
            # is_mx: true swaps in ModelOpt's MXFP8 linear / MoE methods (quantization/fp8.py
            # l.147-160, l.212 at 7ea279ab; from ff2404c5, 2026-07); else 128x128 blocks
            mx = v.facts.get(f"{PREFIX}.{VLLM}.is_mx")
            out["rollout.recipe"] = (mx if isinstance(mx, Unknown) else "mxfp8" if mx is True
                                     else "blockwise", v.src(f"{VLLM}.is_mx",
                                                             v.src(f"{VLLM}.precision")))
        kv = v.facts.get(f"{PREFIX}.{VLLM}.kv_cache_dtype")
        # kv_cache_dtype reaches vLLM only through init_fp8's kwargs, which the worker builds
        # only for precision fp8 (vllm_worker.py, quantization/fp8.py at v0.7.0): without FP8
        # weights it is ignored (FP8D-NRL-0001)
        out["rollout.kv_cache_fp8"] = (
            kv if isinstance(kv, Unknown) else
            prec if isinstance(prec, Unknown) and str(kv).lower().startswith("fp8") else
            fp8 and str(kv).lower().startswith("fp8"),
            v.src(f"{VLLM}.kv_cache_dtype", src))
        kvformat.put(out, kv, v.src(f"{VLLM}.kv_cache_dtype", src))
    elif engine == "megatron":
        # generation runs on the training model: its precision is the policy's
        out["rollout.fp8"] = (out["fp8"][0], out["fp8"][1])
        if out["fp8"][0] is True and "recipe" in out:
            out["rollout.recipe"] = out["recipe"]
    elif engine == "dynamo":
        nemo_rl_dynamo.rollout(v, out, src)     # BF16 only: its validator refuses the rest
    else:
        out["rollout.fp8"] = (Unknown(f"generation backend {engine}: its precision is not "
                                      "read yet"), src)


FRAMEWORK = Framework(
    kind=KIND, title="NeMo-RL", formats=("yaml", "text"), score=score, read=read_yaml,
    derive=derive, precedence=16,
    # OmegaConf.load refuses a key given twice
    duplicate_keys="error",
    references=(
        Reference("--config", KIND, "relative to the launch directory (examples/run_*.py "
                                    "load_config)"),
        Reference("defaults", KIND, "relative to the folder of the file that names it "
                                    "(nemo_rl/utils/config.py load_config_with_inheritance)"),
    ),
    defaults=(
        Default("policy.megatron_cfg.fp8_cfg.enabled", "false", "nemo-rl 0.7.0",
                "examples/configs/grpo_math_1B.yaml"),
        Default("policy.generation.vllm_cfg.precision", "${policy.precision} (bfloat16)",
                "nemo-rl 0.7.0", "examples/configs/grpo_math_1B.yaml"),
    ),
    # Megatron-Core or DTensor (FSDP2), by policy.megatron_cfg.enabled: not "always"
    distributions=("nemo-rl",), rule_area="NRL", area_title="NeMo-RL",
    # run with `uv run` from a checkout of the repository
    from_source=True,
    launch=Launch(read_text, command=HINT, entry=re.compile(r"\bnemo_rl\b"),
                  heredoc_values=True),
    shape_keys=(("model", ("policy.model_name",)), ("seq", ("policy.max_total_sequence_length",)),
                ("micro_batch", ("policy.train_micro_batch_size",)),
                ("tp", (f"{MEG}.tensor_model_parallel_size",
                        "policy.dtensor_cfg.tensor_parallel_size"))),
    # tested for truth on OmegaConf's dict (run_grpo.py l.74-81, algorithms/grpo.py l.817,
    # models/megatron/setup.py l.576-579 @ v0.7.0): a quoted 'false' is on
    bool_keys=(f"{MEG}.enabled", "policy.dtensor_cfg.enabled", f"{FP8}.enabled",
               f"{FP8}.fp8_param", f"{MEG}.sequence_parallel", f"{MEG}.activation_checkpointing",
               "policy.sequence_packing.enabled", "loss_fn.use_importance_sampling_correction"),
    # Hydra overrides: a quoted "false" stays a string (nemo_rl/utils/config.py l.168-188)
    file_strings="truth", cli_strings="truth",
    file_strings_why=(
        "NeMo-RL loads the YAML with OmegaConf and hands OmegaConf.to_container's dict on "
        "unchanged (examples/run_grpo.py l.74-81 @ v0.7.0)"),
)
