"""ROLL (alibaba/ROLL): a pipeline YAML and its launch line, read at v0.3.0.

A ROLL job is one Hydra YAML (``exp_name``, ``pretrain``, ``rollout_batch_size``, worker
sections ``actor_train`` / ``actor_infer`` / ``reference`` / ``critic``; SFT's ``sft_train``,
distillation's ``student`` / ``teacher``, on-policy distillation's ``student_train`` /
``student_infer``: :mod:`.roll_workers`)
started as ``python examples/start_rlvr_pipeline.py --config_path DIR --config_name NAME``
(examples/qwen2.5-7B-rlvr_megatron/run_rlvr_pipeline.sh): the script composes ``NAME.yaml``
from ``DIR`` relative to itself (Hydra ``initialize(config_path=...)``), resolves ``${...}``
and builds the pipeline config with dacite's ``from_dict`` (start_rlvr_pipeline.py:15-27); its
argparse takes no other arguments, so the launch line has no overrides.

- **Training FP8** is Megatron's only: ``actor_train.strategy_args.strategy_config.fp8``
  (e4m3 | hybrid) with ``fp8_recipe`` / ``fp8_param`` (mcore_adapter training_args.py:250-268),
  handed to the Megatron rules as ``config.megatron.*``. ROLL's FSDP2 and DeepSpeed strategies
  have no FP8 path (no ``fp8`` in roll/distributed/strategy/fsdp2_strategy.py at v0.3.0).
- **Rollout FP8** is ``actor_infer.strategy_args.strategy_config.quantization: fp8``, passed to
  vLLM / SGLang as an engine argument; per-tensor unless
  ``hf_overrides.quantization_config.weight_block_size`` asks for blocks, which ROLL's own
  loader quantizes (roll/third_party/vllm/fp8.py:24-43; docs_roll/.../fp8_rollout.md). Without
  it the rollout serves ``pretrain`` in the precision its name tells. ``kv_cache_dtype`` is the
  engine's. The train/infer mismatch is weighted when
  ``train_infer_correction.is_weight.enabled`` (False by default, base_config.py:425-429,
  applied at roll/pipeline/rlvr/actor_pg_worker.py:106-107) and rejected by ratio filters
  (``train_infer_correction.filters``, base_config.py:451-479) — since v0.2.0; v0.1.x had
  neither.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import kvformat
from preflight.frameworks import roll_workers as rw
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.frameworks.ckptname import says_fp8
from preflight.reading.layered import load_chain, source_of
from preflight.reading.overridelaunch import Syntax, base_unread, find_launch, merged_facts
from preflight.reading.parse import Parsed
from preflight.reading.refs import under_roots
from preflight.reading.types import Linked, ReaderOutput

KIND = "roll"
PREFIX = rw.PREFIX
AT = rw.AT
_BASE = f"{AT} roll/configs/base_config.py"
HINT = re.compile(r"\bstart_\w{1,60}_pipeline\.py\b")
FLAGS = re.compile(r"(?:^|\s)--config_name[\s=]")
ENTRY = re.compile(r"^\s*(?:from\s+roll[.\s]|import\s+roll\b)", re.M)
SYNTAX = Syntax(entry=lambda w: bool(HINT.search(w)),
                value_flags=frozenset({"config_path", "config_name"}))
# top-level keys of ROLL's PPOConfig / BaseConfig (base_config.py) no other trainer spells so
_MARKERS = ("exp_name", "pretrain", "reward_pretrain", "rollout_batch_size",
            "num_return_sequences_in_group", "adv_estimator", "checkpoint_config",
            "track_with", "tracker_kwargs", "system_envs", "num_gpus_per_node", "rewards",
            "ppo_epochs", "whiten_advantages", "train_infer_correction")
_HERE = re.compile(r"CONFIG_PATH=[\"']?\$\(\s*basename\s+[\"']?\$\(\s*dirname\s+[\"']?\$0\b")
_DTYPES = {"bf16": "bf16", "fp16": "fp16", "fp32": "fp32"}
_SC = "strategy_args.strategy_config"


def score(data: Any) -> int:
    """A ROLL pipeline YAML: a worker section with ``strategy_args`` (ROLL's own shape,
    worker_config.py:22-46) and ROLL's top-level keys."""
    # `critic` is any RL trainer's key (frameworks/_claim.py GENERIC): it adds weight, never claims
    workers = sum(1 for w in rw.WORKERS if isinstance(data.get(w), dict)
                  and isinstance(data[w].get("strategy_args"), dict))
    if not any(isinstance(data.get(w), dict) and isinstance(data[w].get("strategy_args"), dict)
               for w in (*rw.TRAINERS, "actor_infer", "reference")):
        return 0
    hits = sum(1 for k in _MARKERS if k in data) + 2 * workers
    return 24 + hits if hits >= 4 else 0


def _with_megatron(facts: dict[str, Any], prov: dict[str, Any]) -> None:
    """Megatron's own settings (config.megatron.*) and whether the model is MoE."""
    mf, mp = rw.megatron_facts(facts, prov)
    facts.update(mf)
    prov.update(mp)
    said = rw.moe(facts, prov)
    if said is not None:
        facts[f"{PREFIX}.moe"], facts[f"{PREFIX}.moe_evidence"] = said[0], said[1]
        prov[f"{PREFIX}.moe"] = prov[f"{PREFIX}.moe_evidence"] = said[2]


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    """The pipeline YAML (Hydra ``defaults:`` of its folder too), ``${...}`` resolved, and what
    its Megatron strategy hands Megatron-Core as ``config.megatron.*``."""
    chain = load_chain(path, parsed, style="hydra")
    facts, prov = chain.facts(PREFIX, Source(path, parsed.line_of(("defaults",))))
    _with_megatron(facts, prov)
    linked = tuple(Linked(p, KIND, source_of(path, parsed)(("defaults",)), key="defaults",
                          line=parsed.line_of(("defaults",))) for p in chain.files)
    return ReaderOutput(facts, prov, tuple(chain.problems), linked)


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """``python examples/start_X_pipeline.py --config_path DIR --config_name NAME``: the YAML
    ``NAME.yaml`` in ``DIR`` relative to the script (Hydra's ``initialize``)."""
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    entry = read.launch.entry.text
    cpath, cname = read.flag("config_path"), read.flag("config_name")
    base: tuple[Any, Source] | None = None
    if cname is not None:
        folder = cpath[0] if cpath is not None else "config"   # argparse default
        name = cname[0]
        if isinstance(folder, Unknown) and _HERE.search(text):
            # CONFIG_PATH=$(basename $(dirname $0)): the script's own folder, as 37 of ROLL's
            # example scripts write it (v0.3.0 examples/*/run_*.sh:4)
            folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
        if isinstance(folder, Unknown) or isinstance(name, Unknown):
            bad = folder if isinstance(folder, Unknown) else name
            base = (bad, cname[1])
        elif isinstance(folder, str) and isinstance(name, str):
            target = os.path.join(os.path.dirname(entry), folder, name)
            if not target.endswith((".yaml", ".yml")):
                target += ".yaml"
            # the start script is run from the repository's top (ROLL's README), which a
            # relative entry is taken from: the job's root, not fp8-doctor's folder
            target = under_roots(target) or target
            base = (target, cname[1])
    merged = merged_facts(read, KIND, base, style="hydra", key="--config_name")
    facts, prov = merged.facts, merged.provenance
    facts[f"{PREFIX}.entry"] = entry
    prov[f"{PREFIX}.entry"] = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    _with_megatron(facts, prov)
    return ReaderOutput(facts, prov, tuple(read.problems), merged.linked)


def _train(v: View, out: IntentOut, train: rw.Worker | None, role: str) -> None:
    """Training FP8 of the training role's strategy (actor_train, sft_train, student, ...)."""
    sc = f"{role}.{_SC}"
    fp8 = v.facts.get(f"{PREFIX}.{sc}.fp8")
    unread = base_unread(v.facts, KIND)
    if train is None or train.strategy is None:
        why = unread or Unknown(f"no {role}.strategy_args.strategy_name in the files read")
        out["fp8"] = (why, v.src("base_config", train.source if train else "intent"))
        return
    if isinstance(train.strategy, Unknown):
        out["fp8"] = (train.strategy, train.source)
        out["distributed"] = (train.strategy, train.source)
        return
    out["distributed"] = ({"megatron_train": "megatron", "fsdp2_train": "fsdp2",
                           "deepspeed_train": "deepspeed"}.get(train.strategy, "ddp"),
                          train.source)
    if train.strategy != "megatron_train":
        out["fp8"] = (False, f"{train.source}: {train.strategy} has no FP8 path in ROLL "
                             "(only megatron_train hands fp8 to Megatron-Core)")
        return
    out.runs_on = ("megatron",)
    src = v.src(f"{sc}.fp8", train.source)
    if isinstance(fp8, Unknown):
        out["fp8"] = (fp8, src)
    elif fp8 is None:
        out["fp8"] = (unread, v.src("base_config")) if unread is not None else (
            False, f"{src} ({AT} mcore_adapter training_args.py:263-268: fp8 None, no FP8)")
    elif isinstance(on := rw.truth(fp8), Unknown):
        out["fp8"] = (on, src)
    elif not on:
        # set on TransformerConfig as it is (model_config.py:146-156), whose falsy fp8 is BF16:
        # `need_fp8_context = config.fp8` (megatron/core/fp8_utils.py:505-508 @ core_v0.15.0;
        # redteam6: `fp8: false` / '' / 0 were FP8 "yes")
        out["fp8"] = (False, f"{src} (fp8 {fp8!r:.40}: falsy, Megatron-Core trains in BF16)")
    else:
        fmt = str(fp8).strip()
        out["fp8"] = (True, src)
        out["backend"] = ("te", src)
        # compared as written: "E4M3" raises (fp8_utils.py:441-446 @ core_v0.15.0)
        out["format"] = (fmt if fmt in ("e4m3", "hybrid") else Unknown(
            f"fp8 {fmt[:40]!r} is no Megatron FP8 format (e4m3 | hybrid: Megatron-Core raises "
            "'E4M3 and HYBRID are the only supported FP8 formats', fp8_utils.py:441-446 @ "
            "core_v0.15.0)"), src)
        recipe = v.get(f"{sc}.fp8_recipe") or "delayed"
        out["recipe"] = (str(recipe).strip().lower(), v.src(
            f"{sc}.fp8_recipe", f"{AT} mcore_adapter training_args.py:250-257 (TransformerConfig "
                                "delayed)"))
        out["fp8_params"] = (rw.truth(v.get(f"{sc}.fp8_param") or False), v.src(
            f"{sc}.fp8_param", f"{AT} mcore_adapter training_args.py:258-262 (fp8_param: False)"))
    sizes: tuple[tuple[Stated, str], ...] = (
        ("tp", "tensor_model_parallel_size"), ("cp", "context_parallel_size"),
        ("ep", "expert_model_parallel_size"))
    for name, key in sizes:
        n = v.int(f"{sc}.{key}")
        if n is not None:
            out[name] = (n, v.src(f"{sc}.{key}"))
    if v.has(f"{sc}.sequence_parallel"):
        out["sequence_parallel"] = (rw.truth(v.get(f"{sc}.sequence_parallel")),
                                    v.src(f"{sc}.sequence_parallel"))
    gran = v.get(f"{sc}.recompute_granularity")
    if isinstance(gran, str) and gran.strip():
        out["recompute_granularity"] = (gran.strip().lower(), v.src(f"{sc}.recompute_granularity"))
        out["activation_checkpointing"] = (True, v.src(f"{sc}.recompute_granularity"))


def _rollout(v: View, out: IntentOut, infer: rw.Worker | None, role: str = "actor_infer",
             ) -> None:
    if infer is None:
        return      # SFT / DPO / distillation pipelines have no rollout worker
    engine = infer.strategy
    if isinstance(engine, Unknown) or engine is None:
        out["rollout.engine"] = (engine or Unknown(f"{role} names no strategy"),
                                 infer.source)
        return
    name = {"vllm": "vllm", "sglang": "sglang", "megatron_infer": "megatron"}.get(engine, "hf")
    out["rollout.engine"] = (name, infer.source)
    sc = f"{role}.{_SC}"
    quant = v.facts.get(f"{PREFIX}.{sc}.quantization")
    qsrc = v.src(f"{sc}.quantization", infer.source)
    if name in ("vllm", "sglang") and isinstance(quant, Unknown):
        out["rollout.fp8"] = (quant, qsrc)
    elif name in ("vllm", "sglang") and isinstance(quant, str) and quant.strip():
        fp8 = quant.strip().lower() == "fp8"
        out["rollout.fp8"] = (fp8, qsrc)
        if fp8:
            blocks = v.any_prefix(f"{sc}.hf_overrides.quantization_config.weight_block_size")
            if blocks:
                out["rollout.recipe"] = ("blockwise", v.src(
                    f"{sc}.hf_overrides.quantization_config.weight_block_size", qsrc))
            elif name == "vllm":
                # vLLM's Fp8Config on a BF16 checkpoint: one scale per weight tensor (ROLL's
                # fp8_rollout.md "Dense + Per Tensor Quantization (Default)")
                out["rollout.recipe"] = ("tensorwise", qsrc)
    else:
        model = v.get(f"{role}.model_args.model_name_or_path") or v.get("pretrain")
        msrc = v.src(f"{role}.model_args.model_name_or_path", v.src("pretrain", qsrc))
        said = says_fp8(model) if isinstance(model, str) and model.strip() else None
        out["rollout.fp8"] = (said, msrc) if said is not None else (Unknown(
            f"the rollout serves {str(model)[:80]!r} in the precision of its checkpoint, "
            "which is not read here"), msrc)
    kv = v.get(f"{sc}.kv_cache_dtype")
    if name in ("vllm", "sglang"):
        out["rollout.kv_cache_fp8"] = (isinstance(kv, str) and kv.lower().startswith("fp8"),
                                       v.src(f"{sc}.kv_cache_dtype", f"{qsrc} (kv_cache_dtype: "
                                                                     "auto)"))
        kvformat.put(out, kv, v.src(f"{sc}.kv_cache_dtype", qsrc))
    _correction(v, out)


def _correction(v: View, out: IntentOut) -> None:
    key = "train_infer_correction.is_weight.enabled"
    weighted = v.facts.get(f"{PREFIX}.{key}")
    filters = v.get("train_infer_correction.filters")
    nested = [n for n in v.facts if n.startswith(f"{PREFIX}.train_infer_correction.filters.")
              and n.endswith(".enabled")]
    if isinstance(weighted, Unknown):
        out["rollout.is_correction"] = (weighted, v.src(key))
    elif v.truthy(key):
        out["rollout.is_correction"] = (True, v.src(key))
    elif any(v.facts.get(n) is True for n in nested) or (
            isinstance(filters, list) and any(isinstance(f, dict) and f.get("enabled") is True
                                              for f in filters)):
        out["rollout.is_correction"] = (True, v.src("train_infer_correction.filters"))
    else:
        out["rollout.is_correction"] = (False, v.src(key, f"{_BASE}:425-429 (is_weight.enabled: "
                                                          "False; since v0.2.0)"))


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    role, gen = rw.trainer(f), rw.generator(f)
    train = rw.worker(f, prov, role)
    _train(v, out, train, role)
    dtype = v.get(f"{role}.model_args.dtype", "bf16")
    out["precision"] = (_DTYPES.get(str(dtype).strip().lower(), Unknown(
        f"{role}.model_args.dtype {str(dtype)[:40]!r}")), v.src(
        f"{role}.model_args.dtype", f"{AT} roll/configs/model_args.py:92-93 (dtype: bf16)"))
    _rollout(v, out, rw.worker(f, prov, gen) if gen else None, gen or "actor_infer")
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="ROLL", formats=("yaml", "text"), score=score, read=read_yaml,
    derive=derive, precedence=24,   # 23 left to torchtune (same session)
    references=(
        Reference("--config_name", KIND, "NAME.yaml in --config_path, relative to the start "
                                         "script (Hydra initialize)"),
    ),
    defaults=(
        Default("actor_train.strategy_args.strategy_config.fp8", "None (no FP8)",
                "ROLL v0.3.0", "mcore_adapter/src/mcore_adapter/training_args.py:263-268"),
        Default("actor_train.strategy_args.strategy_config.fp8_recipe",
                "None (TransformerConfig: delayed)", "ROLL v0.3.0",
                "mcore_adapter/src/mcore_adapter/training_args.py:250-257"),
        Default("actor_train.model_args.dtype", "bf16", "ROLL v0.3.0",
                "roll/configs/model_args.py:92-93"),
        Default("train_infer_correction.is_weight.enabled", "False", "ROLL v0.3.0",
                "roll/configs/base_config.py:425-429"),
    ),
    distributions=("roll",), from_source=True, rule_area="ROLL", area_title="ROLL",
    launch=Launch(read_text, command=HINT, flags=FLAGS, entry=ENTRY),
    file_strings="truth",
    file_strings_why=("a worker's strategy_config is passed on as it stands: "
                      "TrainingArguments(**config_dict) (megatron_strategy.py:105-112 @ v0.3.0) "
                      "and TransformerConfig keep a string, which Megatron-Core tests for truth"),
    shape_keys=(("model", ("pretrain",)),),
)
