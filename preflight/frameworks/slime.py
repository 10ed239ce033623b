"""slime: ``ray job submit ... -- python3 train.py`` with Megatron-LM's arguments (trainer) and
``--sglang-*`` / ``--rollout-*`` arguments (SGLang rollout), read at v0.3.1.

The Megatron part is read by :mod:`.megatron_args` (flags by their own name, under
``config.slime.*``) and derived by :func:`.megatron.megatron_intent`, as ms-swift's Megatron path
is. slime builds its Megatron models with Transformer Engine when ``--transformer-impl`` is
``transformer_engine`` (slime/backends/megatron_utils/model_provider.py), Megatron-LM's default
since core 0.6.0; slime pins a Megatron-LM checkout, not the ``megatron-core`` distribution, so
that default is taken here rather than looked up.

Rollout (docs/en/advanced/low-precision.md): always SGLang; FP8 weights come from the
``quantization_config`` of the ``--hf-checkpoint`` it serves (not read here: unknown unless
``--sglang-quantization fp8`` or its name says it: ``...-FP8``, or a model its makers publish in
BF16 under that name, ``Qwen3-30B-A3B``), the KV cache in FP8 with ``--sglang-kv-cache-dtype
fp8_e4m3``. FP8 training is ``--fp8-format e4m3 --fp8-recipe blockwise`` with
``NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1``, which slime sets for its Ray actors unless the
environment says otherwise (slime/ray/actor_group.py) and miles since 7e7926b13 sets by hardware:
where the trainer's environment comes from is :mod:`.slime_env`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import (
    kvformat,
    miles_py,
    miles_refuse,
    slime_custom,
    slime_deepgemm,
    slime_env,
)
from preflight.frameworks import megatron_validated as validated
from preflight.frameworks import rollout_apart as apart
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, Stated, View
from preflight.frameworks.ckptconfig import weights
from preflight.frameworks.ckptname import says_mxfp8
from preflight.frameworks.megatron import megatron_intent
from preflight.frameworks.megatron_args import megatron_flags, read_args_text
from preflight.frameworks.megatron_flags import (
    MEGATRON_BARE,
    SLIME_BARE,
    SLIME_FLAGS,
    SLIME_PREFIXES,
)
from preflight.frameworks.megatron_script import carried
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.types import ReaderOutput

KIND = "slime"
PREFIX = f"config.{KIND}"
MEGATRON = "config.megatron"
# flags only slime's train.py / train_async.py take (slime/utils/arguments.py at v0.3.1)
HINT = re.compile(r"--(?:rollout-num-gpus-per-engine|actor-num-gpus-per-node|actor-num-nodes|"
                  r"rollout-batch-size|n-samples-per-prompt|sglang-mem-fraction-static)\b")


def score(data: Any) -> int:
    """slime is read from its launch scripts only."""
    return 0


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("slime is read from the script that launches train.py; pass the launch "
                     "script")


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """Megatron and slime flags of the script (sourced model scripts too, via ``outer``), and
    the ``NVTE_*`` / ``NCCL_*`` values of its Ray runtime environment JSON. Megatron-LM's own
    flags are also ``config.megatron.*``, for the Megatron rules (train.py hands every flag but
    slime's, SGLang's and the router's to Megatron's parser)."""
    out = read_args_text(path, text, outer, prefix=PREFIX, bare=MEGATRON_BARE | SLIME_BARE)
    if out.facts.get(f"{PREFIX}.train_backend", "megatron") == "megatron":
        # slime adds its own arguments to Megatron-LM's parser (slime/utils/arguments.py
        # l.1547-1569 @ v0.3.1: megatron's parse_args(extra_args_provider=...)): the others are
        # Megatron's, for Megatron's rules (holdout8: MEG-0009). slime before v0.3 also had
        # `--train-backend fsdp`, which runs no Megatron
        out = megatron_flags(out, PREFIX, SLIME_FLAGS, SLIME_PREFIXES)
    facts, prov = dict(out.facts), dict(out.provenance)
    slime_custom.apply(path, facts, prov)     # --custom-config-path: its keys win (use_tis)
    if f"{MEGATRON}.args_of" in facts:
        # slime runs Megatron-LM's validate_args on them (megatron_validated.py)
        facts[validated.NAME], prov[validated.NAME] = validated.slime(
            facts, prov, PREFIX, carried(text, outer, "debug-rollout-only")
            if f"{PREFIX}.debug_rollout_only" in facts else None)
        facts[validated.PARSED], prov[validated.PARSED] = validated.SLIME_PARSED
        facts[validated.DROPS], prov[validated.DROPS] = validated.SLIME_DROPS
        zero = f"{MEGATRON}.use_distributed_optimizer"
        facts[zero], prov[zero] = _zero_optimizer(facts, prov.get(zero, path))
    # the trainer's NVTE_* / NCCL_*: --runtime-env-json of the command that runs train.py,
    # --train-env-vars (slime_env.py), not any JSON-looking text of the script
    slime_env.read(path, text, outer, facts, prov)
    kv = slime_env.kv_fake_quant(facts, prov)
    if kv is not None:
        facts[f"{PREFIX}.train_kv_fake_quant"], prov[f"{PREFIX}.train_kv_fake_quant"] = kv
    deepgemm = slime_deepgemm.fact(facts, prov)
    if deepgemm is not None:
        facts[slime_deepgemm.NAME], prov[slime_deepgemm.NAME] = deepgemm
    ckpt = f"{PREFIX}.hf_checkpoint"
    if ckpt in facts:
        # SGLang serves the checkpoint in the format its config.json's quantization_config
        # names: read where the folder is inside the job (frameworks/ckptconfig.py)
        held = weights(facts[ckpt], path)
        facts[f"{ckpt}_weights"] = held.fp8
        prov[f"{ckpt}_weights"] = held.source or prov.get(ckpt, path)
    return ReaderOutput(facts, prov, out.problems, out.linked)


def _zero_optimizer(facts: Mapping[str, Any], where: Any) -> tuple[Any, Any]:
    """slime sets Megatron's distributed optimizer itself after parsing, whatever the flags say:
    always (``_set_default_megatron_args``, "always use zero optimizer", slime 1cddc5d
    slime/backends/megatron_utils/arguments.py; miles before its multi-LoRA work the same); miles
    07b59321 only for Adam, the default, and not with multi-LoRA adapters or
    ``--debug-disable-optimizer`` (miles/backends/megatron_utils/arguments.py:18-24). holdout11:
    a miles job with --fp8-param-gather and no --use-distributed-optimizer drew a false
    FP8D-MEG-0001."""
    optimizer = facts.get(f"{MEGATRON}.optimizer")
    others = [k for k in (f"{PREFIX}.multi_lora_n_adapters", f"{MEGATRON}.multi_lora_n_adapters",
                          f"{PREFIX}.debug_disable_optimizer",
                          f"{MEGATRON}.debug_disable_optimizer")
              if facts.get(k) not in (None, False, 0, "0")]
    if (optimizer is None or str(optimizer).lower() == "adam") and not others:
        return True, ("slime sets use_distributed_optimizer itself for Adam (slime 1cddc5d, miles "
                      "07b59321 megatron_utils/arguments.py set_default_megatron_args)")
    said = f"--optimizer {optimizer}" if others == [] else others[0].rsplit(".", 1)[1]
    return Unknown(f"{said}: slime keeps the distributed optimizer on, miles 07b59321 turns it "
                   "off (megatron_utils/arguments.py:18-24)"), where


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    s = View(f, KIND, prov)
    out = megatron_intent(s, f, prov)
    if out.get("fp8", (False,))[0] is True and not s.has("transformer_impl"):
        out["backend"] = ("te", "slime: Megatron-LM's default --transformer-impl "
                                "transformer_engine (slime/backends/megatron_utils/"
                                "model_provider.py)")
    if not s.truthy("fp16"):
        # slime/backends/megatron_utils/arguments.py: `args.bf16 = not args.fp16`
        out["precision"] = ("bf16", s.src("bf16", "slime sets bf16 unless --fp16 "
                                                  "(megatron_utils/arguments.py)"))
    out["rollout.engine"] = ("sglang", s.src("rollout_num_gpus_per_engine",
                                             "slime rolls out with SGLang"))
    # a --sglang-quantization set at run time is not known: not the checkpoint's precision
    quant = s.unknown("sglang_quantization") or s.get("sglang_quantization")
    ckpt = s.get("hf_checkpoint")
    held = f.get(f"{PREFIX}.hf_checkpoint_weights")
    said = apart.by_weights(None, ckpt)
    if isinstance(quant, Unknown):
        out["rollout.fp8"] = (quant, s.src("sglang_quantization"))
    elif quant is not None:
        out["rollout.fp8"] = (str(quant).lower().startswith("fp8"), s.src("sglang_quantization"))
    elif s.has("hf_checkpoint_weights") and ckpt is not None:
        # its config.json (inside the job), else its name, else why not (ckptconfig.weights)
        out["rollout.fp8"] = (held, s.src("hf_checkpoint_weights") if isinstance(held, bool)
                              else s.src("hf_checkpoint"))
    elif said is not None:
        # SGLang given no quantization serves the checkpoint's precision (rollout_apart): a
        # checkpoint named ...-FP8 is the FP8 conversion slime's docs tell users to make for FP8
        # rollout (docs/en/advanced/low-precision.md at v0.3.1; Qwen/Qwen3-4B-FP8); a public
        # model published in BF16 (or a folder marked bf16) is served in BF16
        out["rollout.fp8"] = (said, s.src("hf_checkpoint"))
    elif ckpt is not None:
        out["rollout.fp8"] = (Unknown(f"SGLang serves --hf-checkpoint {str(ckpt)[:80]!r} in the "
                                      "precision of its quantization_config, which is not "
                                      "read here"), s.src("hf_checkpoint"))
    else:
        out["rollout.fp8"] = (Unknown("no --hf-checkpoint given: the rollout precision is not "
                                      "known"), "intent")
    if out.get("rollout.fp8", (None,))[0] is True and quant is None and isinstance(ckpt, str) \
            and says_mxfp8(ckpt) and "config.json" not in str(s.src("hf_checkpoint_weights")):
        # SGLang serves an MXFP8 conversion (`<model>-MXFP8`) with MXFP8 GEMMs
        out["rollout.recipe"] = ("mxfp8", s.src("hf_checkpoint"))
    slime_deepgemm.intent(s, f, out)    # DeepGEMM block-FP8 forward on selected layers
    miles_refuse.intent(f, s, out)      # what the launcher's __post_init__ refused (asked)
    # --use-tis: truncated importance sampling of the rollout/trainer mismatch
    # (slime/utils/arguments.py at v0.3.1; off unless given)
    out["rollout.is_correction"] = (s.unknown("use_tis") or s.truthy("use_tis"),
                                    s.src("use_tis", "slime default (no --use-tis)"))
    kv = s.unknown("sglang_kv_cache_dtype") or s.get("sglang_kv_cache_dtype")
    out["rollout.kv_cache_fp8"] = (apart.kv_fp8(kv), s.src("sglang_kv_cache_dtype",
                                                           "SGLang default (kv_cache_dtype auto)"))
    kvformat.put(out, kv, s.src("sglang_kv_cache_dtype", "kv_cache_dtype"))
    if out.get("recipe", (None,))[0] == "blockwise":
        out["block_scales_fp32"] = slime_env.fp32_scales(f, prov)
    moe: tuple[tuple[Stated, str], ...] = (("moe.experts", "num_experts"),
                                           ("moe.top_k", "moe_router_topk"),
                                           ("ep", "expert_model_parallel_size"))
    for name, key in moe:
        if s.int(key) is not None:
            out[name] = (s.int(key), s.src(key))
    if s.truthy("use_dynamic_batch_size"):
        out["packing"] = (True, s.src("use_dynamic_batch_size"))
    nodes, gpus = s.int("actor_num_nodes"), s.int("actor_num_gpus_per_node")
    if gpus:
        out["num_gpus"] = (gpus * (nodes or 1), s.src("actor_num_gpus_per_node"))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="slime", formats=("text",), score=score, read=read_yaml, derive=derive,
    precedence=18,
    defaults=(
        Default("NVTE_FP8_BLOCK_SCALING_FP32_SCALES", "1 (set for the Ray actors)",
                "slime 0.3.1", "slime/ray/actor_group.py"),
        Default("NVTE_FP8_BLOCK_SCALING_FP32_SCALES", "0 on compute capability >= 10, else 1",
                "miles >= 7e7926b13", "miles/utils/environ.py"),
        Default("--transformer-impl", "transformer_engine", "Megatron-LM core >= 0.6.0",
                "megatron/training/arguments.py"),
    ),
    runs_on=("megatron",),
    # run as `python3 train.py` from a checkout, Megatron-LM on PYTHONPATH
    distributions=("slime",), from_source=True, rule_area="SLIME",
    launch=Launch(read_text, command=HINT, entry=re.compile(r"\bslime\b"), heredoc_values=True),
    # miles' / slime's Python launchers (scripts/run_*.py: U.execute_train): miles_py.py
    read_python=miles_py.read_python, python_hint=miles_py.PY_HINT,
    shape_keys=(("heads", ("num_attention_heads",)), ("kv_heads", ("num_query_groups",)),
                ("layers", ("num_layers",)), ("seq", ("seq_length",)),
                ("micro_batch", ("micro_batch_size",)), ("tp", ("tensor_model_parallel_size",)),
                ("model", ("hf_checkpoint",)), ("gated", ("swiglu",))),
)
