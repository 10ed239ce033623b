"""Derive ``intent.*`` (what the job asks for) from the ``config.*`` facts of every framework.

Each framework's own reading is its module's ``derive`` (``preflight/frameworks/<kind>.py``);
this module only combines them the way the frameworks themselves interact at launch:

- **FP8 asked for** when any framework asks (accelerate ``mixed_precision: fp8`` or
  ``ACCELERATE_MIXED_PRECISION=fp8``, llm-foundry ``precision: amp_fp8``, torchtitan float8/MX
  converters or ``enable_float8_linear``, Megatron ``--fp8-format`` / ``--fp8-hybrid``,
  Lightning ``transformer-engine*`` precision, NeMo ``model.fp8``, a DeepSpeed ``msamp`` block
  with ``enabled: true`` (MS-AMP's DeepSpeed integration)), then two overrides that the
  frameworks really apply:

  * HF ``TrainingArguments`` ``bf16: true`` / ``fp16: true`` replace accelerate's mixed precision
    (Trainer sets ``mixed_precision`` from its own fields, overriding the accelerate config /
    ``ACCELERATE_MIXED_PRECISION``; transformers ``training_args.py``, and
    https://github.com/hiyouga/LlamaFactory/issues/9500 for the silent-BF16 outcome). So
    ``intent.fp8`` is false and ``intent.fp8_overridden_by`` names the HF setting -- unless the
    asking framework states the backend that still converts (``survives_override``: accelerate
    >= 1.9.0 with the TE backend ``accelerate launch`` exports, PR 3677): then FP8 stays on with
    that backend and ``DelayedScaling()``, under the overriding precision; Unknown while the
    accelerate version is not known. An FP8 switch that is Unknown goes through the same test
    (``_replaced``): replaced with nothing left, it is "no" whatever it is (``accelerate launch
    --mixed_precision "$MP"`` under ``TrainingArguments(bf16=True)``).
  * NeMo 1.x ignores every ``fp8*`` key unless ``model.transformer_engine`` is true
    (NeMo docs, ``features/mixed_precision.rst``).

  An accelerate YAML with an ``fp8_config`` block but no ``mixed_precision`` (the form a
  ``deepspeed_config_file`` forces, FP8D-ACC-0003) leaves ``intent.fp8`` *unknown*: the switch is
  ``accelerate launch --mixed_precision fp8`` or the script, which no config reader sees.

  The ``fp8: true`` key that LlamaFactory and axolotl add to their TrainingArguments YAML also
  asks for FP8; whether their own ``bf16: true`` then wins differs by tool and version
  (LlamaFactory issue 9500 reports silent BF16), so it is left to rules on the config facts.

  A DeepSpeed JSON with ``fp16.enabled: true`` under accelerate fp8 does not turn FP8 off: it
  makes accelerate raise (``DeepSpeedPlugin.set_mixed_precision``), which a rule reports; the
  intent stays ``fp8 = true, precision = fp16``. Under accelerate fp8 + DeepSpeed the precision is
  bf16 unless the JSON sets ``bf16.enabled: false`` (then fp32, ACC-DS-04).
- **Other values**: the first framework that states one, in the order HF Trainer (its explicit
  bf16/fp16 and gradient checkpointing win), accelerate, DeepSpeed, llm-foundry, torchtitan,
  Megatron, NeMo, Lightning; except ``zero_stage``, where the DeepSpeed JSON wins over
  accelerate's inline ``deepspeed_config.zero_stage`` (accelerate refuses both together).
  ``backend`` / ``recipe`` / ``format`` come from the framework that asks for FP8; where it
  leaves one Unknown, another framework that asks states it (an accelerate handler built at run
  time, TE layers under the script's own ``fp8_autocast(fp8_recipe=MXFP8BlockScaling())``).
- **Shapes**: ``intent.shapes.gemms`` are the forward GEMMs of one dense transformer layer per
  rank, ``[M, K, N]`` with ``M`` = tokens per micro-batch per rank and tensor parallelism
  dividing the sharded dimension: QKV ``[M, h, 3h/tp]``, attention out ``[M, h/tp, h]``, FC1
  ``[M, h, ffn/tp]``, FC2 ``[M, ffn/tp, h]``. Where the config says (Megatron, NeMo),
  grouped-query attention makes QKV ``[M, h, kv*(heads + 2*groups)/tp]`` and attention out
  ``[M, kv*heads/tp, h]``, and a gated MLP (``--swiglu``) doubles FC1's N.

  ``shapes.dims_align`` / ``shapes.tokens_align`` are the largest power of two (capped at 128)
  dividing both hidden and FFN sizes / the tokens per rank (``tokens / tp`` with Megatron or NeMo
  sequence parallelism), for the FP8 divisibility rules (16 for per-tensor, 32 for MXFP8).
  ``fsdp_shards`` says whether FSDP2's ``fsdp_shard_size`` ranks split hidden and FFN evenly.
- **What the config says**: accelerate without a dynamo backend gives ``intent.compile =
  false`` (accelerate will not compile; a ``torch.compile`` call in the script cannot be seen
  from the config, and the rules want the config's answer). Where the config says nothing at
  all because the script decides (activation checkpointing under accelerate or DeepSpeed alone),
  the value is ``Unknown`` with the reason.
- **Environment**: ``env.ACCELERATE_MIXED_PRECISION`` / ``env.ACCELERATE_FP8_BACKEND`` (runtime
  probe) count when the accelerate config does not set them, and for an HF Trainer job, whose
  Trainer reads ``ACCELERATE_MIXED_PRECISION`` when its own bf16/fp16 are off.

With no config read, every intent fact is ``Unknown("no job config read")`` (``--assume`` may
still set them; the API keeps assumed values). With configs read, a value no framework states is
``Unknown`` with the reason, except ``zero_stage`` (only when DeepSpeed is used), ``recipe`` /
``format`` (only when FP8 is asked for) and ``fp8_source`` / ``fp8_overridden_by`` (only when
there is such a setting), which are then absent. Provenance is the ``file:line`` of the deciding
setting, or a short phrase naming the framework default that decided it, or ``intent``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from preflight.facts import Unknown
from preflight.frameworks._derived import INTERNAL, Derived, Sourced, Value
from preflight.intent_fill import VOCAB as VOCAB  # re-exported (rules lint, tests)
from preflight.intent_fill import _fill
from preflight.intent_fill import _shards as _shards  # re-exported (tests)

if TYPE_CHECKING:
    from preflight.frameworks._record import Framework

NO_CONFIG = "no job config read"
NO_FP8_SETTING = "no FP8 setting in the configs read"

NAMES = ("fp8", "fp8_source", "fp8_overridden_by", "frameworks", "backend", "recipe", "format",
         "precision", "distributed", "zero_stage", "activation_checkpointing",
         "recompute_granularity", "compile",
         "num_gpus", "shapes.hidden", "shapes.ffn", "shapes.tokens", "shapes.gemms",
         "shapes.dims_align", "shapes.tokens_align", "tp", "cp", "sequence_parallel",
         "fp8_attention", "cuda_graphs", "fp8_params", "tp_comm_overlap", "stack", "seq_len",
         "micro_batch", "packing", "pad_multiple", "moe.experts", "moe.top_k", "ep",
         "rollout.engine", "rollout.fp8", "rollout.recipe", "rollout.kv_cache_fp8",
         "rollout.kv_cache_format", "rollout.is_correction", "recipe_by_backend", "block_scales_fp32", "fsdp_shard_size",
         "fsdp_shards", "te_modules", "fp8_weight_storage", "fp8_scope")


@lru_cache(maxsize=1)
def _orders() -> tuple[Mapping[str, Framework], tuple[str, ...], dict[str, tuple[str, ...]]]:
    """The frameworks registry, the order in which frameworks state a value, and the exceptions
    by name (each framework's record says where it stands: precedence / zero_stage_rank).
    Imported on first use: a check with no job config never loads the readers."""
    from preflight.frameworks import BY_KIND, FRAMEWORKS

    order = tuple(f.kind for f in sorted(FRAMEWORKS, key=lambda f: f.precedence))
    by_name = {"zero_stage": tuple(f.kind for f in sorted(
        (f for f in FRAMEWORKS if f.zero_stage_rank is not None),
        key=lambda f: f.zero_stage_rank or 0))}
    return BY_KIND, order, by_name


def _facts_and_prov(facts: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, str]]:
    return facts, (p if isinstance(p := getattr(facts, "provenance", None), Mapping) else {})


def derive_intent(facts: Mapping[str, Any]) -> tuple[dict[str, Value], dict[str, str]]:
    """``(values, provenance)`` of every ``intent.*`` fact (names with the ``intent.`` prefix)."""
    facts, prov = _facts_and_prov(facts)
    kinds = facts.get("config.kinds")
    if not isinstance(kinds, list) or not kinds:
        values: dict[str, Value] = {f"intent.{n}": Unknown(NO_CONFIG) for n in NAMES}
        return values, {name: "intent" for name in values}
    by_kind, order, by_name = _orders()
    derive_kinds = set(kinds)
    for kind in kinds:
        # e.g. HF Trainer reads ACCELERATE_MIXED_PRECISION itself when its bf16/fp16 are off.
        fw = by_kind.get(kind)
        for other, fact in (fw.derive_also if fw else ()):
            if isinstance(facts.get(fact), str):
                derive_kinds.add(other)
    per = {k: by_kind[k].derive(facts, prov) for k in order if k in derive_kinds}
    got: dict[str, Sourced] = {"frameworks": (list(kinds), "config"),
                               "stack": (_stack(kinds, per, by_kind), "config")}
    names = {n for d in per.values() for n in d.values}
    for name in names - {"fp8"}:
        for kind in by_name.get(name, order):
            if kind in per and name in per[kind].values:
                got[name] = per[kind].values[name]
                break
    # A framework's default counts only where no framework states the value.
    for kind in order:
        for name, value in (per[kind].defaults.items() if kind in per else ()):
            if name not in got:
                got[name] = value
    _combine_fp8(per, got)
    for suffix in (".base_config", ".unread_args"):   # not read, so "no" is a guess (walk.py)
        why = next((v for n, v in facts.items() if n.startswith("config.") and
                    n.endswith(suffix) and isinstance(v, Unknown)), None)
        for name in ("fp8", "rollout.fp8") if why is not None else ():
            if name in got and got[name][0] is False and (suffix == ".unread_args" or
                                                          got[name][1] == NO_FP8_SETTING):
                got[name] = (Unknown(f"{str(getattr(why, 'reason', ''))[:200]}; whether the "
                                     "job asks for FP8 is not known"), "config")
    unrecognised = facts.get("config.unrecognised")
    if got["fp8"][0] is False and isinstance(unrecognised, list) and unrecognised:
        # a file forced by --kind held none of that framework's settings: "no FP8 setting" there
        # means nothing was understood, not that FP8 is off (issue 22 item 5)
        got["fp8"] = (Unknown(f"{', '.join(map(str, unrecognised[:3]))}: none of the settings of "
                              "the framework --kind names were found, so whether the job asks "
                              "for FP8 is not known"), "config")
    _fill(got)
    values = {f"intent.{n}": v for n, (v, _) in got.items() if n not in INTERNAL}
    provenance = {f"intent.{n}": s for n, (_, s) in got.items() if n not in INTERNAL}
    return values, provenance


def _cancel(kind: str, per: dict[str, Derived]) -> Sourced | None:
    """The explicit precision of a framework that replaces ``kind``'s FP8 where it is asked (the
    HF Trainer's ``bf16=True`` rewrites ``ACCELERATE_MIXED_PRECISION``: transformers v4.52.4
    src/transformers/training_args.py ``TrainingArguments.__post_init__``, "if training args is
    specified, it will override the one specified in the accelerate config"; NeMo 1.x without
    ``transformer_engine`` over its own fp8 keys), True or Unknown; None where none does."""
    by_kind = _orders()[0]
    return next((d.overrides_fp8 for k, d in per.items()
                 if kind in by_kind[k].cancels_fp8_of and d.overrides_fp8 is not None), None)


def _replaced(kind: str, per: dict[str, Derived]) -> str | None:
    """Where ``kind``'s FP8, were it asked, is certainly replaced with nothing of it left: the
    overriding setting's source; None where nothing replaces it, the override is not known, or a
    backend survives it (:attr:`Derived.survives_override`). One test for an FP8 that is asked
    and for one whose switch is Unknown (`accelerate launch --mixed_precision "$MP"` under
    ``TrainingArguments(bf16=True)``): replaced either way, the job runs no FP8."""
    cancel = _cancel(kind, per)
    if cancel is None or cancel[0] is not True:
        return None
    if kind in per and per[kind].survives_override is not None:
        return None
    return cancel[1]


def _stack(kinds: list[str], per: dict[str, Derived], by_kind: Mapping[str, Framework]
           ) -> list[str]:
    """Every framework the job runs on: the kinds read, then what each runs on (its record's
    ``runs_on`` and, for this job, the ``runs_on`` its derive states), transitively."""
    stack = list(dict.fromkeys(kinds))
    todo = list(stack)
    while todo:
        kind = todo.pop(0)
        fw = by_kind.get(kind)
        stated = per[kind].runs_on if kind in per else ()
        for base in (*(fw.runs_on if fw else ()), *stated):
            if base not in stack and base in by_kind:
                stack.append(base)
                todo.append(base)
    return stack


def _combine_fp8(per: dict[str, Derived], got: dict[str, Sourced]) -> None:
    stated = {k: fp8 for k, d in per.items() if (fp8 := d.values.get("fp8")) is not None}
    asking = [(k, fp8[1]) for k, fp8 in stated.items() if fp8[0] is True]
    undecided = [fp8 for fp8 in stated.values() if isinstance(fp8[0], Unknown)]
    if not asking and undecided:
        # e.g. an accelerate fp8_config whose switch is on the CLI; "no" where every one of
        # them would be replaced if it asked, the test an asked FP8 goes through below
        unknown = [k for k, fp8 in stated.items() if isinstance(fp8[0], Unknown)]
        live = [stated[k] for k in unknown if _replaced(k, per) is None]
        override = _replaced(unknown[0], per)
        if live or override is None:
            got["fp8"] = live[0] if live else undecided[0]
            return
        got["fp8"] = (False, override)
        got["fp8_overridden_by"] = (override, override)
        return
    if not asking:
        got["fp8"] = (False, next((fp8[1] for fp8 in stated.values()), NO_FP8_SETTING))
        return
    kind, source = asking[0]
    by_kind = _orders()[0]
    got["fp8"] = (True, source)
    got["fp8_source"] = (source, source)
    cancel = _cancel(kind, per)
    override = cancel[1] if cancel is not None else None
    explicit = any(by_kind[k].explicit_precision_wins and d.overrides_fp8 is not None
                   for k, d in per.items())
    if cancel is not None and isinstance(cancel[0], Unknown) and len(asking) == 1:
        # e.g. TrainingArguments(bf16=<set under a condition the text does not decide>)
        got["fp8"] = (Unknown(f"FP8 is asked at {source}, but {cancel[0].reason}"), cancel[1])
        return
    kept = per[kind].survives_override if kind in per else None
    if override is not None and len(asking) == 1 and kept is not None:
        # the asking framework still converts with this backend (accelerate >= 1.9 with the TE
        # backend `accelerate launch` exported: DelayedScaling() over the replaced precision)
        if isinstance(kept[0], Unknown):
            got["fp8"] = (Unknown(f"FP8 is asked at {source} and the precision is replaced at "
                                  f"{override}: {kept[0].reason}"), kept[1])
            got["fp8_overridden_by"] = (override, override)
            return
        got["backend"] = (kept[0], kept[1])
        got["recipe"] = ("delayed", f"{kept[1]} (no recipe handler: DelayedScaling())")
        got["format"] = ("hybrid", f"{kept[1]} (DelayedScaling() default HYBRID)")
        return
    replaced = _replaced(kind, per) if len(asking) == 1 else None
    if replaced is not None:
        override = replaced
        got["fp8"] = (False, override)
        got["fp8_overridden_by"] = (override, override)
        got["backend"] = ("none", override)
        got.pop("recipe", None)
        got.pop("format", None)
    elif not by_kind[kind].explicit_precision_wins and kind in per and \
            "precision" in per[kind].values and not explicit:
        got["precision"] = per[kind].values["precision"]
    if got["fp8"][0] and kind in per:
        for name in ("backend", "recipe", "format"):   # from the framework that asked for FP8
            if name in per[kind].values:
                got[name] = _known(name, per[kind].values[name], asking, per)


def _known(name: str, value: Sourced, asking: list[tuple[str, str]],
           per: dict[str, Derived]) -> Sourced:
    """``value`` of the first framework that asks for FP8, or where it is Unknown, the value
    another asking framework states (accelerate's backend Unknown for a handler built at run
    time, while the script's own ``te.fp8_autocast(fp8_recipe=MXFP8BlockScaling())`` around
    its TE layers says both: the inner autocast is what those GEMMs run, holdout18 llmfp8)."""
    if not isinstance(value[0], Unknown):
        return value
    return next((per[k].values[name] for k, _ in asking[1:] if k in per and
                 name in per[k].values and not isinstance(per[k].values[name][0], Unknown)),
                value)


def derive(facts: Mapping[str, Any]) -> tuple[dict[str, Value], dict[str, str]]:
    """The interface the API calls (see docs/internals.md)."""
    return derive_intent(facts)
