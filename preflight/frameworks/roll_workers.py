"""ROLL's worker configs, and what its Megatron strategy hands Megatron-Core, as Megatron's facts.

Read at alibaba/ROLL v0.3.0 (7f9d4d38, 2026-06-18; HEAD 8eb27cc2 agrees on every line cited):

- **Workers.** A pipeline config (``PPOConfig``, roll/configs/base_config.py:482-500) has one
  ``WorkerConfig`` per role: ``actor_train``, ``actor_infer``, ``reference``, ``critic``
  (roll/configs/worker_config.py:88-100); SFT, distillation and on-policy distillation name
  their trainer otherwise (:data:`TRAINERS`), with the same strategies and FP8 settings. Each names its engine in
  ``strategy_args.strategy_name`` and passes ``strategy_args.strategy_config`` to it
  (worker_config.py:22-46). The names are ``megatron_train`` / ``megatron_infer`` /
  ``fsdp2_train`` / ``fsdp2_infer`` / ``vllm`` / ``sglang`` / ``hf_infer`` / ``mock_infer``
  (roll/distributed/strategy/factory.py:18-35; v0.1.0 also ``deepspeed_train`` /
  ``deepspeed_infer``, factory.py:11-14 there); any other name raises ValueError
  (factory.py:34-35).
- **Megatron.** ``megatron_train`` builds mcore_adapter's ``TrainingArguments`` from the
  worker's ``training_args`` updated with ``strategy_config`` (megatron_strategy.py:105-112),
  and ``McaModelConfig.update_with_args`` sets every non-None ``DistributingParallelArguments``
  field on the model's TransformerConfig (mcore_adapter/.../models/model_config.py:141-156): so
  ``fp8`` (e4m3 | hybrid, None by default: FP8 off) is Megatron's FP8 format, ``fp8_recipe`` its
  recipe (TransformerConfig's ``delayed`` when None), ``fp8_param`` its FP8 parameters
  (Megatron-LM's ``--fp8-param-gather``), ``tensor_model_parallel_size`` & co. are Megatron's
  own (mcore_adapter/src/mcore_adapter/training_args.py:28-268), ``use_distributed_optimizer``
  False by default (training_args.py:326-329). ``model_args.dtype`` (bf16 by default,
  roll/configs/model_args.py:92-93) turns ``training_args.bf16`` / ``fp16`` on
  (worker_config.py:328-332). These are stated as ``config.megatron.*`` under Megatron-LM's
  argument names, with ``config.megatron.args_of: roll`` (Megatron's own derive stays off) and
  ``config.megatron.validated_args: false`` (Megatron-LM's ``validate_args`` never runs:
  ``megatron_validated.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import megatron_validated as validated

PREFIX = "config.roll"
MEGATRON = "config.megatron"
AT = "ROLL v0.3.0"
URL = "https://github.com/alibaba/ROLL/blob/v0.3.0"
TRAIN = ("megatron_train", "fsdp2_train", "deepspeed_train")
INFER = ("vllm", "sglang", "hf_infer", "megatron_infer", "fsdp2_infer", "deepspeed_infer",
         "mock_infer")
WORKERS = ("actor_train", "actor_infer", "reference", "critic", "sft_train", "student",
           "teacher", "student_train", "student_infer")
TRAINERS = ("actor_train", "sft_train", "student", "student_train")
"""The role that trains, by pipeline: RL / DPO ``actor_train`` (base_config.py:488,
pipeline/dpo/dpo_config.py:23), SFT ``sft_train`` (pipeline/sft/sft_config.py:43-46), distillation
``student`` (pipeline/distill/distill_config.py:21-24; its ``teacher`` only runs forward passes,
``megatron_infer`` / ``hf_infer`` in examples/qwen2.5-7B-distill_megatron/distill_megatron.yaml),
on-policy distillation ``student_train`` / ``student_infer``, which ROLL maps onto
``actor_train`` / ``actor_infer`` (base_config.py:605-614, 711-724: ``is_pure_opd``, which
examples/start_onpolicy_distill_pipeline.py:52-53 sets)."""
_RENAMED = {"fp8": "fp8_format", "fp8_param": "fp8_param_gather"}
# mcore_adapter's own fields, no Megatron-LM argument (training_args.py:269-275, 370-395)
_NOT_MEGATRON = frozenset({"additional_configs", "save_hf_model", "save_merged_model",
                           "ckpt_format", "sequence_packing", "compile_warmup",
                           "optimizer_cpu_offload", "optimizer_offload_fraction",
                           "lr_scheduler_kwargs"})
_BOOLS = frozenset({"fp8_param_gather", "use_distributed_optimizer", "sequence_parallel",
                    "overlap_grad_reduce", "overlap_param_gather", "moe_grouped_gemm",
                    "accumulate_allreduce_grads_in_fp32"})


@dataclass(frozen=True)
class Worker:
    """One worker role: its strategy (or Unknown / None) and where it is said."""

    role: str
    strategy: Any           # "megatron_train" | ... | Unknown | None (no strategy_name)
    source: str


def worker(facts: Mapping[str, Any], prov: Mapping[str, str], role: str) -> Worker | None:
    """The worker ``role`` of the config, None when the config has no such section."""
    base = f"{PREFIX}.{role}."
    if not any(n.startswith(base) for n in facts):
        return None
    key = f"{base}strategy_args.strategy_name"
    value = facts.get(key)
    src = prov.get(key, prov.get(next((n for n in facts if n.startswith(base)), ""), "config"))
    if isinstance(value, Unknown) or value is None:
        return Worker(role, value, src)
    # compared as written (`strategy_name == "megatron_train"`, factory.py:18-35): "Megatron_Train"
    # or a trailing blank stops the job (redteam6: read as megatron_train)
    if not isinstance(value, str) or value not in TRAIN + INFER:
        return Worker(role, Unknown(
            f"strategy_name {str(value)[:60]!r} is none of ROLL's ({', '.join(TRAIN + INFER)}; "
            f"{AT} roll/distributed/strategy/factory.py:18-35 raises on any other)"), src)
    return Worker(role, value, src)


def _has(facts: Mapping[str, Any], role: str) -> bool:
    base = f"{PREFIX}.{role}."
    return any(n.startswith(base) for n in facts)


def trainer(facts: Mapping[str, Any]) -> str:
    """The role whose strategy trains (:data:`TRAINERS`): on-policy distillation's
    ``student_train`` where the config has it and no ``actor_train`` (or sets ``is_pure_opd``,
    or the on-policy distillation start script runs it), else the first role present;
    ``actor_train`` when none is."""
    opd = facts.get(f"{PREFIX}.is_pure_opd") is True or \
        "onpolicy_distill" in str(facts.get(f"{PREFIX}.entry", ""))
    if _has(facts, "student_train") and (opd or not _has(facts, "actor_train")):
        return "student_train"
    return next((r for r in TRAINERS if r != "student_train" and _has(facts, r)), "actor_train")


def generator(facts: Mapping[str, Any]) -> str | None:
    """The role that generates rollouts: ``actor_infer`` (``student_infer`` where the trainer
    is ``student_train``); None for SFT and (offline) distillation, which generate nothing."""
    train = trainer(facts)
    if train == "student_train":
        return "student_infer"
    if train in ("sft_train", "student"):
        return None
    return "actor_infer"


def strategy_config(facts: Mapping[str, Any], role: str) -> dict[str, Any]:
    """``<role>.strategy_args.strategy_config``'s leaves, by their path below it."""
    base = f"{PREFIX}.{role}.strategy_args.strategy_config."
    return {n[len(base):]: v for n, v in facts.items() if n.startswith(base)}


def megatron_facts(facts: Mapping[str, Any], prov: Mapping[str, str]
                   ) -> tuple[dict[str, Any], dict[str, str]]:
    """What the training role's Megatron strategy hands Megatron-Core, as ``config.megatron.*``
    (empty unless it runs ``megatron_train``; the role: :func:`trainer`)."""
    out: dict[str, Any] = {}
    src: dict[str, str] = {}
    role = trainer(facts)
    train = worker(facts, prov, role)
    if train is None or train.strategy != "megatron_train":
        return out, src
    base = f"{PREFIX}.{role}.strategy_args.strategy_config"
    for key, value in strategy_config(facts, role).items():
        head = key.split(".", 1)[0]
        if head in _NOT_MEGATRON:
            continue
        name = _RENAMED.get(key, key)
        if value is None and name in ("fp8_format", "fp8_recipe"):
            continue          # None: not set (update_with_args skips it, model_config.py:146)
        if name in _BOOLS:
            value = truth(value)   # a dataclass field set as it is, tested for its truth
        if name == "fp8_format":
            on = truth(value)
            if on is False:
                continue      # false, '', 0: set, and Megatron-Core trains in BF16 (truth)
            if isinstance(on, Unknown):
                value = on
        out[f"{MEGATRON}.{name}"] = value
        src[f"{MEGATRON}.{name}"] = prov.get(f"{base}.{key}", train.source)
    if f"{MEGATRON}.fp8_format" in out and f"{MEGATRON}.fp8_recipe" not in out:
        out[f"{MEGATRON}.fp8_recipe"] = "delayed"
        src[f"{MEGATRON}.fp8_recipe"] = (f"{AT} mcore_adapter training_args.py:250-257 "
                                         "(fp8_recipe None: TransformerConfig's delayed)")
    for name, default, where in (
            ("use_distributed_optimizer", False, "training_args.py:326-329"),
            ("fp8_param_gather", False, "training_args.py:258-262")):
        if f"{MEGATRON}.{name}" not in out:
            out[f"{MEGATRON}.{name}"] = default
            src[f"{MEGATRON}.{name}"] = f"{AT} mcore_adapter {where} ({name}: {default})"
    dkey = f"{PREFIX}.{role}.model_args.dtype"
    dtype = facts.get(dkey, "bf16")
    dsrc = prov.get(dkey, f"{AT} roll/configs/model_args.py:92-93 (dtype: bf16)")
    if isinstance(dtype, Unknown):
        out[f"{MEGATRON}.bf16"] = out[f"{MEGATRON}.fp16"] = dtype
    else:
        low = str(dtype).strip().lower()
        out[f"{MEGATRON}.bf16"], out[f"{MEGATRON}.fp16"] = low == "bf16", low == "fp16"
    src[f"{MEGATRON}.bf16"] = src[f"{MEGATRON}.fp16"] = dsrc
    out[f"{MEGATRON}.args_of"], src[f"{MEGATRON}.args_of"] = "roll", train.source
    # no megatron.training: the Megatron rules citing validate_args stay quiet
    out[validated.NAME], src[validated.NAME] = validated.ROLL
    out[validated.PARSED], src[validated.PARSED] = validated.ROLL_PARSED
    out[validated.DROPS], src[validated.DROPS] = validated.ROLL_DROPS
    return out, src


def truth(value: Any) -> bool | Unknown:
    """Whether a ``strategy_config`` value given (not None) is on, as Megatron-Core tests it:
    mcore_adapter's ``TrainingArguments(**config_dict)`` (megatron_strategy.py:105-112) and
    ``update_with_args`` (model_config.py:146-156) set it on the TransformerConfig as it is (no
    dataclass converts a string: a quoted 'false' is on), which trains in FP8 when ``fp8`` is
    true (``need_fp8_context = config.fp8``, megatron/core/fp8_utils.py:505-508 @ core_v0.15.0,
    the megatron-core ROLL v0.3.0 pins). An interpolation left unresolved here
    (``${oc.env:FP8}``: Hydra resolves it when the job starts) is Unknown, as is an Unknown."""
    if isinstance(value, Unknown):
        return value
    if isinstance(value, str) and "${" in value:
        return Unknown(f"fp8 {value[:60]!r} is resolved by Hydra when the job starts (an "
                       "environment variable or a value not read here)")
    return bool(value)


# names of mixture-of-experts releases (Qwen3-30B-A3B, Qwen3-Next-80B-A3B, Mixtral, DeepSeek-V3,
# gpt-oss, Moonlight, ...): ROLL's MoE examples are named so (v0.3.0 examples/qwen3-30BA3B-*)
_MOE_NAME = re.compile(r"(?i)(?:\d+B-?A\d+(?:\.\d+)?B|\bmoe\b|mixtral|deepseek-v[23]|"
                       r"gpt-oss|moonlight|\bdbrx\b|olmoe|ernie-4\.5-\d+b-a)")
MAX_NAME = 4096


def moe(facts: Mapping[str, Any], prov: Mapping[str, str]) -> tuple[bool, str, str] | None:
    """Whether the model is a mixture of experts, as the config shows it: an expert-parallel
    size above 1 or a ``moe_*`` Megatron setting in a worker's strategy_config, or a model name
    of an MoE release; None when nothing says so (a dense model says nothing either)."""
    for role in WORKERS:
        for key, value in strategy_config(facts, role).items():
            name = f"{PREFIX}.{role}.strategy_args.strategy_config.{key}"
            if key == "expert_model_parallel_size" and isinstance(value, int) and \
                    not isinstance(value, bool) and value > 1:
                return True, f"{role} expert_model_parallel_size {value}", prov.get(name, "")
            if key.startswith("moe_") and value not in (None, False):
                return True, f"{role} sets {key}", prov.get(name, "")
    for key in ("pretrain", "student_pretrain", "actor_infer.model_args.model_name_or_path"):
        value = facts.get(f"{PREFIX}.{key}")
        if isinstance(value, str) and _MOE_NAME.search(value[:MAX_NAME]):
            return True, f"{key} {value[:80]!r}", prov.get(f"{PREFIX}.{key}", "")
    return None
