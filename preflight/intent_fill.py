"""Fill ``intent.*`` after the frameworks are combined: Unknown with a reason for what no
framework states, the closed vocabularies, and the shapes computed from hidden / FFN / tokens
(the forward GEMMs of one layer, the alignment facts, FSDP2's shard split). Split out of
:mod:`preflight.intent` (size limit); the shape rules are described there.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from preflight.facts import Unknown
from preflight.frameworks._derived import Sourced
from preflight.frameworks._view import MAX_PLAUSIBLE
from preflight.registry.intent import SPECS as INTENT_SPECS

_UNSTATED = {
    "backend": "the configs read do not say which FP8 backend",
    "precision": "the configs read do not say the compute precision",
    "distributed": "the configs read do not say how the job is distributed",
    "activation_checkpointing": "the files read do not say whether activation checkpointing "
                                "is on (it is often switched on in model code)",
    "recompute_granularity": "the configs read do not say the activation recompute "
                             "granularity (a Megatron / NeMo setting)",
    "compile": "the files read do not say whether the model is compiled (torch.compile is "
               "often called in model code)",
    "num_gpus": "the configs read do not say how many GPUs",
    "fsdp_shard_size": "the files read do not say over how many ranks FSDP2 shards parameters",
    "fsdp_shards": "the files read do not say over how many ranks FSDP2 shards parameters",
    "shapes.hidden": "the configs read do not give the model's hidden size",
    "shapes.ffn": "the configs read do not give the model's FFN size",
    "shapes.tokens": "the configs read do not give micro-batch size and sequence length",
    "shapes.gemms": "hidden size, FFN size or tokens per micro-batch are not known",
    "shapes.dims_align": "the configs read do not give the model's hidden and FFN sizes",
    "shapes.tokens_align": "the configs read do not give micro-batch size and sequence length",
    "tp": "the configs read do not say the tensor-parallel size (a Megatron / NeMo / torchtitan "
          "/ accelerate parallelism_config setting)",
    "cp": "the configs read do not say the context-parallel size (a Megatron / NeMo / "
          "torchtitan / accelerate parallelism_config setting)",
    "sequence_parallel": "the configs read do not say whether sequence parallelism is on (a "
                         "Megatron / NeMo setting)",
    "fp8_attention": "the configs read do not say whether attention runs in FP8 (TE fp8_dpa is "
                     "set in code or by Megatron / NeMo)",
    "cuda_graphs": "the configs read do not say whether CUDA graphs are used (set in code, or "
                   "by Megatron / NeMo)",
    "fp8_params": "the configs read do not say whether parameters are kept in FP8 (TE "
                  "fp8_model_init in code, or Megatron / NeMo)",
    "tp_comm_overlap": "the configs read do not say whether TP communication overlap is on (a "
                       "Megatron / NeMo setting)",
    "seq_len": "the configs read do not give the sequence length",
    "micro_batch": "the configs read do not give the micro-batch size",
    "packing": "the configs read do not say whether samples are packed",
    "pad_multiple": "the configs read do not say to what multiple sequences are padded",
    "moe.experts": "the configs read do not say whether the model has MoE experts",
    "moe.top_k": "the configs read do not give the MoE router's top-k",
    "ep": "the configs read do not say the expert-parallel size",
}
# Not in _UNSTATED: rollout.* exist only for a job with an RL rollout (a framework that has one
# states them, Unknown where it cannot tell); a supervised job has no rollout (absent = false).


# The closed vocabularies, from the fact registry (rules lint checks rules against the same).
VOCAB = {spec.name.removeprefix("intent."): set(spec.choices) for spec in INTENT_SPECS
         if spec.choices}


def _fill(got: dict[str, Sourced]) -> None:
    """Unknown for what no framework stated; drop what does not apply; compute the GEMMs."""
    for name, allowed in VOCAB.items():
        value, source = got.get(name, (None, ""))
        if value is None or isinstance(value, Unknown):
            continue
        if not isinstance(value, str):
            # `recipe_name = ["rowwise"]` (TOML) or `--fp8-recipe: [delayed]` (YAML): the
            # framework would reject it; a list is also unhashable, so `in allowed` would raise.
            got[name] = (Unknown(f"{name} is {_short(value)}, not a single name"), source)
        elif value not in allowed:
            # e.g. Megatron --fp8-recipe custom, a misspelt fp8_format: the config.* fact keeps
            # the raw value for rules; intent only speaks the closed vocabulary.
            got[name] = (Unknown(f"{name} {_short(value)} is none of "
                                 f"{', '.join(sorted(allowed))}"), source)
    for name, (value, source) in list(got.items()):
        if _int(value) and abs(value) > MAX_PLAUSIBLE:
            # Two 3,000-digit arguments made a 6,000-digit token count that json.dumps refused.
            got[name] = (Unknown(f"{name.split('.')[-1]} is larger than 2**53: not a plausible "
                                 "size"), source)
    if not got["fp8"][0]:
        got.setdefault("backend", ("none", got["fp8"][1]))
        for name in ("recipe", "format", "fp8_scope"):
            got.pop(name, None)
    else:
        for name in ("recipe", "format"):
            got.setdefault(name, (Unknown(f"the configs read do not say the FP8 {name}"),
                                  "intent"))
    if got.get("distributed", (None,))[0] != "deepspeed":
        got.pop("zero_stage", None)
    else:
        got.setdefault("zero_stage", (Unknown("DeepSpeed is used but no ZeRO stage is given"),
                                      "intent"))
    h = got.get("shapes.hidden", (None,))[0]
    ffn = got.get("shapes.ffn", (None,))[0]
    tokens = got.get("shapes.tokens", (None,))[0]
    tp_value = got.get("shapes.tp", (1,))[0]
    tp = tp_value if _positive(tp_value) else 1
    if isinstance(tp_value, Unknown):
        got["shapes.gemms"] = (Unknown(f"tensor parallelism: {tp_value.reason}"), "intent")
    elif _positive(h) and _positive(ffn) and _positive(tokens):
        qkv_out, proj_in, fc1_out = (
            v if _positive(v) else default for v, default in (
                (got.get("shapes.qkv_out", (None,))[0], 3 * h),
                (got.get("shapes.proj_in", (None,))[0], h),
                (got.get("shapes.fc1_out", (None,))[0], ffn)))
        got["shapes.gemms"] = ([[tokens, h, qkv_out // tp], [tokens, proj_in // tp, h],
                                [tokens, h, fc1_out // tp], [tokens, ffn // tp, h]], "intent")
    if _positive(h) and _positive(ffn):
        got["shapes.dims_align"] = (_align(math.gcd(h, ffn)), "intent")
    elif "shapes.modules_align" in got:     # te.Linear(712, 896) in a plain script
        got["shapes.dims_align"] = got["shapes.modules_align"]
    if _positive(tokens):
        # With Megatron sequence parallelism the non-GEMM parts hold tokens / tp per rank.
        split = tokens // tp if got.get("shapes.sp", (False,))[0] and tokens % tp == 0 else tokens
        align = _align(math.gcd(tokens, split))
        pad, mb = got.get("pad_multiple", (None,))[0], got.get("micro_batch", (1,))[0]
        if _positive(pad) and got.get("packing", (None,))[0] is not True and split == tokens:
            # Rows padded to a multiple of `pad` (TRL's / axolotl's pad_to_multiple_of) make every
            # micro-batch's token count a multiple of micro_batch x pad, whatever the sequence
            # length (FP8D-TE-0012's fix; packed rows are FP8D-TE-0051's).
            align = max(align, _align(pad * (mb if _positive(mb) else 1)))
        got["shapes.tokens_align"] = (align, "intent")
    _shards(got, h, ffn)
    # What is computed from an input that is Unknown for a stated reason keeps that reason.
    for name, inputs in (("shapes.gemms", (h, ffn, tokens)), ("shapes.dims_align", (h, ffn)),
                         ("shapes.tokens_align", (tokens,))):
        unknown = next((v for v in inputs if isinstance(v, Unknown)), None)
        if unknown is not None:
            got.setdefault(name, (unknown, "intent"))
    for name, reason in _UNSTATED.items():
        got.setdefault(name, (Unknown(reason), "intent"))


def _shards(got: dict[str, Sourced], h: Any, ffn: Any) -> None:
    """``fsdp_shards``: FSDP2 splits each parameter's dim 0 over ``fsdp_shard_size`` ranks, the
    last shard smaller when it does not divide (pytorch/ao issue 3982: float8 all-gather then
    crashes). Where hidden and FFN are known they decide; where not, a power of two up to 128
    divides every Linear dim a transformer has in practice (multiples of 128), any other size
    almost never divides all of them (4096 over 3 ranks), so likely_uneven."""
    n = got.get("fsdp_shard_size", (None,))[0]
    if not _positive(n):
        return
    if _positive(h) and _positive(ffn):
        got["fsdp_shards"] = ("uneven" if h % n or ffn % n else "even", "intent")
    elif n == 1 or (n & (n - 1) == 0 and n <= 128):
        got["fsdp_shards"] = ("even", "intent")
    else:
        got["fsdp_shards"] = ("likely_uneven", "intent")


def _int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive(value: Any) -> TypeGuard[int]:
    return bool(_int(value) and value > 0)


def _short(value: Any) -> str:
    """``repr`` of a config value, cut short (a reason must stay one readable line)."""
    text = repr(value) if not _int(value) or value.bit_length() < 200 else "a huge number"
    return text if len(text) <= 60 else text[:57] + "..."


def _align(n: int) -> int:
    """Largest power of two dividing ``n``, capped at 128 (what the FP8 shape rules compare)."""
    return min(n & -n, 128)

__all__ = ["VOCAB", "_fill", "_shards"]
