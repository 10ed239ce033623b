"""verl: ``python3 -m verl.trainer.main_ppo [--config-path D --config-name N] key=value ...``
(or another trainer entry point: ``verl.experimental.<x>.*main*``, verl-recipe's
``recipe.<x>.main_<x>``; :mod:`.verl_shipped`) and its Hydra YAML trainer configs.

verl composes its config with Hydra (``@hydra.main(config_path="config",
config_name="ppo_trainer")``, verl/trainer/main_ppo.py at v0.9.0): the packaged
``ppo_trainer.yaml`` (or ``--config-name ppo_megatron_trainer``, or a job's own YAML named by
``--config-path`` / ``--config-name`` whose ``defaults:`` list names the packaged one), then the
launch line's overrides. The packaged configs are not in the job folder; what they default to
and what decides FP8 is :data:`PACKAGED` below, read at v0.9.0
(``verl/trainer/config/_generated_ppo_megatron_trainer.yaml``, ``rollout/rollout.yaml``,
``actor/dp_actor.yaml``).

FP8 (docs/low_precision/fp8.md at v0.9.0): training in FP8 only on the Megatron engine, through
``actor_rollout_ref.actor.megatron.override_transformer_config.fp8`` (``hybrid`` | ``e4m3``) and
``...fp8_recipe`` (TransformerConfig fields, Transformer Engine); rollout in FP8 with
``actor_rollout_ref.rollout.quantization=fp8`` (vLLM: block-wise 128x128 weights,
vllm_rollout/vllm_async_server.py ``_apply_quantization``), KV cache in FP8 through the
engine's ``kv_cache_dtype`` in ``rollout.engine_kwargs.<engine>``; ``quantization=mxfp8``
(SGLang) is an MXFP8 rollout.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import flashrl, kvformat, verl_sft
from preflight.frameworks import rollout_apart as apart
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, Stated, View
from preflight.frameworks.verl_launch import read_text
from preflight.frameworks.verl_shipped import HINT
from preflight.reading.layered import load_chain, source_of
from preflight.reading.overridelaunch import base_unread
from preflight.reading.parse import Parsed
from preflight.reading.types import Linked, ReaderOutput

KIND = "verl"
PREFIX = f"config.{KIND}"
ACTOR = "actor_rollout_ref.actor"
MEG = f"{ACTOR}.megatron"
TFC = f"{MEG}.override_transformer_config"
ROLLOUT = "actor_rollout_ref.rollout"
_FP32_SCALES = "env.NVTE_FP8_BLOCK_SCALING_FP32_SCALES"   # the launch script's, read_text
_SRC = "verl v0.9.0 verl/trainer/config"
# rollout.quantization values that are FP8 rollouts, with the engine's FP8 recipe: fp8 is
# block-wise 128x128 weights with dynamic activation scales in vLLM and SGLang
# (vllm_async_server.py _apply_quantization / async_sglang_server.py fp8_block_quant_kwargs at
# verl b178a3cd); mxfp8 is SGLang's MXFP8 (verl-recipe cb5a12ed
# low_precision/run_dapo_qwen3_moe_30b_mxfp8e2e.sh: "Rollout side (SGLang): MXFP8")
_FP8_ROLLOUT = {"fp8": "blockwise", "mxfp8": "mxfp8"}
PACKAGED: dict[str, tuple[Any, str]] = {
    # what the packaged config holds when the job does not say (read at v0.9.0)
    f"{ACTOR}.strategy": ("fsdp", f"{_SRC}/actor/dp_actor.yaml (strategy: fsdp)"),
    f"{ROLLOUT}.quantization": (None, f"{_SRC}/rollout/rollout.yaml (quantization: null)"),
    f"{MEG}.tensor_model_parallel_size": (1, f"{_SRC}/_generated_ppo_megatron_trainer.yaml"),
    f"{MEG}.context_parallel_size": (1, f"{_SRC}/_generated_ppo_megatron_trainer.yaml"),
    f"{MEG}.expert_model_parallel_size": (1, f"{_SRC}/_generated_ppo_megatron_trainer.yaml"),
    f"{MEG}.sequence_parallel": (True, f"{_SRC}/_generated_ppo_megatron_trainer.yaml"),
    f"{MEG}.use_remove_padding": (True, f"{_SRC}/_generated_ppo_megatron_trainer.yaml"),
    "actor_rollout_ref.model.use_remove_padding": (True, f"{_SRC}/model/hf_model.yaml"),
    "algorithm.rollout_correction.rollout_is": (
        None, f"{_SRC}/algorithm/rollout_correction.yaml (rollout_is: null)"),
}


def score(data: Any) -> int:
    """A verl trainer YAML has ``actor_rollout_ref`` and verl's other sections."""
    top = {str(k) for k in data}
    if "actor_rollout_ref" not in top:
        return 0
    return 6 + len(top & {"algorithm", "trainer", "data", "critic", "reward_model",
                          "custom_reward_function"})


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    """A job's own trainer YAML, over the ``defaults:`` files of its folder (Hydra)."""
    chain = load_chain(path, parsed, style="hydra")
    facts, prov = chain.facts(PREFIX, Source(path, parsed.line_of(("defaults",))))
    if chain.packaged:
        facts[f"{PREFIX}.defaults_packaged"] = chain.packaged
        prov[f"{PREFIX}.defaults_packaged"] = Source(path, parsed.line_of(("defaults",)))
    linked = tuple(Linked(p, KIND, source_of(path, parsed)(("defaults",)), key="defaults",
                          line=parsed.line_of(("defaults",))) for p in chain.files)
    return ReaderOutput(facts, prov, tuple(chain.problems), linked)


def _get(v: View, key: str) -> tuple[Any, str]:
    """The job's value, or the packaged config's (with where it was read); Unknown when the
    job's own config YAML (--config-path/--config-name) was not read."""
    if v.has(key):
        raw = v.facts.get(v.prefix + key)
        return raw, v.src(key)
    unread = base_unread(v.facts, KIND)
    if unread is not None:
        return unread, v.src("base_config")
    return PACKAGED.get(key, (None, "verl default"))


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    if verl_sft.is_sft(v):
        return verl_sft.derive(v)
    out = IntentOut()
    engine = _engine(v)
    out["distributed"] = engine
    megatron = engine[0] == "megatron"
    fmt, fmt_src = _get(v, f"{TFC}.fp8")
    if isinstance(fmt, Unknown):
        out["fp8"] = (fmt, fmt_src)
    elif isinstance(engine[0], Unknown) and fmt not in (None, False):
        # the line's own value stands (an override beats any base), but whether the Megatron
        # engine that reads it runs is the unread base's to say
        out["fp8"] = (engine[0], engine[1])
        if isinstance(fmt, str) and fmt.lower() in {"hybrid", "e4m3", "e5m2"}:
            out["format"] = (fmt.lower(), fmt_src)
    elif megatron and isinstance(fmt, str) and fmt.lower() in {"hybrid", "e4m3", "e5m2"}:
        out["fp8"] = (True, fmt_src)
        out["format"] = (fmt.lower(), fmt_src)
        out["backend"] = ("te", fmt_src)
        recipe, rsrc = _get(v, f"{TFC}.fp8_recipe")
        out["recipe"] = (recipe, rsrc) if recipe is not None else \
            ("delayed", "Megatron TransformerConfig default (fp8_recipe delayed)")
        param, psrc = _get(v, f"{TFC}.fp8_param")
        out["fp8_params"] = (bool(param) if not isinstance(param, Unknown) else param,
                             psrc if param is not None else "TransformerConfig default")
    else:
        why = (fmt_src if fmt is not None else
               "verl trains in BF16 unless override_transformer_config.fp8 is set on the "
               "Megatron engine (docs/low_precision/fp8.md)")
        out["fp8"] = (False, why)
    out["precision"] = ("bf16", v.src(f"{MEG}.dtype", "verl default (dtype bfloat16)"))
    if megatron:
        _on_megatron(v, out)
        sizes: tuple[tuple[Stated, str], ...] = (("tp", "tensor_model_parallel_size"),
                                                 ("cp", "context_parallel_size"),
                                                 ("ep", "expert_model_parallel_size"))
        for name, key in sizes:
            value, src = _get(v, f"{MEG}.{key}")
            out[name] = (_int(value, key), src)
        sp, ssrc = _get(v, f"{MEG}.sequence_parallel")
        out["sequence_parallel"] = (sp if isinstance(sp, Unknown) else
                                    bool(sp) and out["tp"][0] != 1, ssrc)
    pad_key = f"{MEG}.use_remove_padding" if megatron else "actor_rollout_ref.model.use_remove_padding"
    packed, psrc = _get(v, pad_key)
    out["packing"] = (packed if isinstance(packed, Unknown) else bool(packed), psrc)
    prompt, resp = v.int("data.max_prompt_length"), v.int("data.max_response_length")
    if prompt and resp:
        out["seq_len"] = (prompt + resp, v.src("data.max_response_length"))
    mb = v.int(f"{ACTOR}.ppo_micro_batch_size_per_gpu")
    if mb:
        out["micro_batch"] = (mb, v.src(f"{ACTOR}.ppo_micro_batch_size_per_gpu"))
    gpus, nodes = v.int("trainer.n_gpus_per_node"), v.int("trainer.nnodes")
    if gpus:
        out["num_gpus"] = (gpus * (nodes or 1), v.src("trainer.n_gpus_per_node"))
    _rollout(v, out)
    fp32 = v.get(_FP32_SCALES)
    if fp32 is not None:
        out["block_scales_fp32"] = (str(fp32) == "1", v.src(_FP32_SCALES))
    return out.build()


def _on_megatron(v: View, out: IntentOut) -> None:
    """The Megatron engine builds a Megatron-Core model from a TransformerConfig that
    ``override_transformer_config`` feeds field by field (workers/engine/megatron at v0.9.0), so
    the job runs on Megatron-Core: Megatron's rules reach it through ``intent.stack``."""
    out.runs_on = ("megatron",)
    att = next((k for k in (f"{TFC}.fp8_dot_product_attention", f"{TFC}.fp8_multi_head_attention")
                if v.has(k)), None)
    out["fp8_attention"] = (
        (any(v.truthy(k) for k in (f"{TFC}.fp8_dot_product_attention",
                                    f"{TFC}.fp8_multi_head_attention")), v.src(att))
        if att else _unread_or(v, False, "TransformerConfig default (fp8_dot_product_attention "
                                         "False)"))
    gran, gsrc = _get(v, f"{TFC}.recompute_granularity")
    if isinstance(gran, Unknown):
        out["recompute_granularity"] = (gran, gsrc)
    else:
        name = "none" if gran in (None, "null", "none") else str(gran).lower()
        out["recompute_granularity"] = (name, gsrc if gran is not None else
                                        f"{_SRC}/engine/megatron.yaml (recompute_granularity: null)")
        out["activation_checkpointing"] = (name != "none", out["recompute_granularity"][1])


def _unread_or(v: View, value: Any, src: str) -> tuple[Any, str]:
    unread = base_unread(v.facts, KIND)
    return (unread, v.src("base_config")) if unread is not None else (value, src)


def _int(value: Any, key: str) -> Any:
    if isinstance(value, Unknown) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return Unknown(f"{key} is {str(value)[:40]!r}, not a number")


def _engine(v: View) -> tuple[Any, str]:
    """Which training engine: Megatron or FSDP (``model_engine=megatron`` from v0.8,
    ``--config-name ppo_megatron_trainer``, or ``actor.strategy``)."""
    me = v.get("model_engine")
    if isinstance(me, str):
        return ("megatron" if me == "megatron" else
                "fsdp2" if me == "dp" and v.get(f"{ACTOR}.strategy") == "fsdp2" else
                "fsdp1" if me == "dp" else Unknown(f"model_engine {me!r}"), v.src("model_engine"))
    strategy, src = _get(v, f"{ACTOR}.strategy")
    if not v.has(f"{ACTOR}.strategy") and v.get("packaged_config") == "ppo_megatron_trainer":
        # --config-name ppo_megatron_trainer, or a shipped config over it (verl_shipped)
        return "megatron", v.src("packaged_config")
    packaged = v.get("defaults_packaged")
    if not v.has(f"{ACTOR}.strategy") and isinstance(packaged, list) and \
            any("megatron" in str(p) for p in packaged):
        return "megatron", v.src("defaults_packaged")
    if isinstance(strategy, Unknown):
        return strategy, src
    return {"megatron": "megatron", "fsdp": "fsdp1", "fsdp2": "fsdp2"}.get(
        str(strategy), Unknown(f"actor strategy {strategy!r}")), src


def _rollout(v: View, out: IntentOut) -> None:
    name = v.facts.get(f"{PREFIX}.{ROLLOUT}.name")
    src = v.src(f"{ROLLOUT}.name", "verl rollout/rollout.yaml (name: ??? must be given)")
    if isinstance(name, Unknown):
        out["rollout.engine"] = (name, src)
    elif isinstance(name, str) and name != "???":
        out["rollout.engine"] = (name.lower(), src)
    else:
        out["rollout.engine"] = (Unknown("actor_rollout_ref.rollout.name is not given (verl "
                                         "requires it: vllm, sglang, trtllm or hf)"), src)
    quant, qsrc = _get(v, f"{ROLLOUT}.quantization")
    name_q = str(quant).lower() if not isinstance(quant, Unknown) else ""
    if isinstance(quant, Unknown):
        out["rollout.fp8"] = (quant, qsrc)
    elif quant in (None, False) or name_q in ("null", "none", ""):
        out["rollout.fp8"] = (False, qsrc)
    elif name_q in _FP8_ROLLOUT:
        out["rollout.fp8"] = (True, qsrc)
        out["rollout.recipe"] = (_FP8_ROLLOUT[name_q], qsrc)
    else:
        # torchao (its config file decides the dtype), nvfp4, or a value verl added later
        out["rollout.fp8"] = (Unknown(f"rollout quantization {str(quant)[:40]!r} is not one "
                                      "fp8-doctor knows to be FP8 or not"), qsrc)
    if out["rollout.fp8"][0] is False:
        # FlashRL's FLASHRL_CONFIG patches the vLLM engine verl builds (quantization unset)
        flashrl.apply(out, v.facts, PREFIX, v.src, out["rollout.engine"][0])
    _correction(v, out)
    _kv_cache(v, out)


def _kv_cache(v: View, out: IntentOut) -> None:
    """``rollout.kv_cache_fp8``: the engine's own ``engine_kwargs.<engine>.kv_cache_dtype`` (what
    verl hands vLLM / SGLang), else a ``rollout.kv_cache_dtype`` the job states. verl defines no
    such rollout key (rollout/rollout.yaml at v0.9.0): a plain override of it starts only on a verl
    that takes it (a fork or branch; FlashRL issue 20's job ran with it), so it is the job's stated
    KV-cache precision, never the engine default."""
    engine = out["rollout.engine"][0]
    kv_key = f"{ROLLOUT}.engine_kwargs.{engine}.kv_cache_dtype" if isinstance(engine, str) \
        else None
    if kv_key is None or not v.has(kv_key):
        kv_key = f"{ROLLOUT}.kv_cache_dtype" if v.has(f"{ROLLOUT}.kv_cache_dtype") else kv_key
    kv = v.facts.get(f"{PREFIX}.{kv_key}") if kv_key else None
    out["rollout.kv_cache_fp8"] = (apart.kv_fp8(kv), v.src(kv_key, "the rollout engine's default "
                                                                   "KV cache dtype (auto)"))
    kvformat.put(out, kv, v.src(kv_key, "kv_cache_dtype") if kv_key else "kv_cache_dtype")


def _correction(v: View, out: IntentOut) -> None:
    """``rollout.is_correction``: ``algorithm.rollout_correction.rollout_is`` (token | sequence:
    on, docs/algo/rollout_corr.md), or the FlashRL fork's TIS cap ``actor.imp_ratio_cap``
    (yaof20/verl 928d71a5 core_algos.py compute_policy_loss: only ``if imp_ratio_cap > 0``)."""
    tis, tsrc = _get(v, "algorithm.rollout_correction.rollout_is")
    out["rollout.is_correction"] = (tis if isinstance(tis, Unknown) else
                                    tis not in (None, False, "null", ""), tsrc)
    cap, key = v.facts.get(f"{PREFIX}.{ACTOR}.imp_ratio_cap"), f"{ACTOR}.imp_ratio_cap"
    if out["rollout.is_correction"][0] is not True and v.has(key):
        number = re.fullmatch(r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?", str(cap).strip())
        out["rollout.is_correction"] = (
            cap if isinstance(cap, Unknown) else float(number.group(0)) > 0 if number else
            Unknown(f"imp_ratio_cap={str(cap)[:40]!r} is not a number"), v.src(key))


FRAMEWORK = Framework(
    kind=KIND, title="verl", formats=("yaml", "text"), score=score, read=read_yaml,
    derive=derive, precedence=15,
    cancels_fp8_of=(KIND,),       # the SFT Automodel engine drops enable_fp8 (verl_sft.py)
    # Hydra loads YAML with OmegaConf, which refuses a key given twice
    duplicate_keys="error",
    references=(
        Reference("--config-name", KIND,
                  "<--config-path>/<--config-name>.yaml, a relative --config-path taken from the "
                  "folder of the module that declares @hydra.main (verl/trainer/ for "
                  "verl.trainer.main_ppo: --config-path=config is verl's packaged config); "
                  "without --config-path, verl's packaged config"),
        Reference("defaults", KIND, "<name>.yaml in the same config folder (Hydra defaults "
                                    "list); other entries are verl's packaged configs"),
    ),
    defaults=tuple(Default(k, str(v), "verl 0.9.0", s) for k, (v, s) in PACKAGED.items()),
    # Megatron-Core or FSDP, by the job's engine: not "always" (derive says which)
    distributions=("verl",), rule_area="VERL",
    launch=Launch(read_text, command=HINT, heredoc_values=True),
    shape_keys=(("model", ("actor_rollout_ref.model.path",)),
                ("micro_batch", (f"{ACTOR}.ppo_micro_batch_size_per_gpu",)),
                ("tp", (f"{MEG}.tensor_model_parallel_size",))),
    # the boolean keys fp8-doctor reads. verl hands each on as it stands: the engine configs are
    # built by hydra.utils.instantiate from `_target_` (omega_conf_to_dataclass with no
    # dataclass_type, verl/utils/config.py l.40-50; engine_workers.py l.534, 587 @ v0.9.0), which
    # converts nothing (no OmegaConf.structured, so no BooleanNode), or read straight off the
    # DictConfig (megatron_workers.py l.212, 565-567; fsdp_workers.py l.868 @ v0.7.1), and
    # override_transformer_config is a dict set key by key on Megatron's provider
    # (transformer_impl.py l.364-365 @ v0.9.0): each is then tested for truth, so a quoted
    # 'false' (or "0", `no` on the launch line) is on
    bool_keys=(f"{MEG}.sequence_parallel", f"{MEG}.use_remove_padding",
               f"{MEG}.dynamic_context_parallel", "actor_rollout_ref.model.use_remove_padding",
               f"{TFC}.fp8_param", f"{TFC}.fp8_dot_product_attention",
               f"{TFC}.fp8_multi_head_attention"),
    bool_strings="truth",
    file_strings_why=(
        "verl builds its configs with hydra.utils.instantiate (verl/utils/config.py l.40-50 @ "
        "v0.9.0), which keeps the string, but passes some of them on to the rollout engine "
        "(rollout.enable_chunked_prefill becomes a vLLM command-line flag, vllm_async_server.py "
        "l.297, 409 @ v0.9.0), whose parser decides"),
)
