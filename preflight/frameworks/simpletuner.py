"""SimpleTuner (bghira/SimpleTuner): its ``config.json`` / ``config.toml`` training options, and
its ``config.env`` form (:mod:`.simpletuner_env`).

Read at 002cabbbe907362adf33bcc2715bc584bbe5255e (2026-08-02). SimpleTuner's config file holds
its argparse options (simpletuner/helpers/configuration/cmd_args.py), written with or without
the leading ``--`` (``"--model_family": "wan"`` and ``"model_family": "wan"`` both load): so a
key is read with the dashes stripped. Its own keys (``model_family``, ``model_flavour``,
``base_model_precision``, ``data_backend_config``) are no TrainingArguments fields, although it
shares some names with them (``report_to``, ``hub_model_id``, ``num_train_epochs``): the HF
Trainer reader must not claim it (holdout20, frameworks/_claim.py FOREIGN).

FP8 is the frozen base model's weight precision, ``base_model_precision`` (default
``no_change``), mapped to a quantiser by simpletuner/helpers/training/quantisation/__init__.py
(l.268 ``"fp8-torchao": "float8_dynamic_activation_float8_weight"``, l.714 its branch): torchao's
inference ``quantize_`` of the base under LoRA (FP8 weights, dynamic per-step FP8 activations,
``torch._scaled_mm``: compute capability 8.9 or newer, documentation/OPTIONS.md l.460). The
``*-quanto`` FP8 presets store the weights as optimum-quanto qfloat8, whose matmul path depends on
the GPU (Marlin FP8 kernels, or dequantised to the compute dtype): FP8 compute is Unknown there.
``int8-*``, ``int4-*``, ``nf4-bnb`` and ``no_change`` are no FP8. The trained LoRA adapters and
the optimizer follow ``mixed_precision`` (bf16 | fp16 | no).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import simpletuner_env
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.parse import Parsed, flatten
from preflight.reading.types import ReaderOutput

KIND = "simpletuner"
PREFIX = f"config.{KIND}"
_REPO = "https://github.com/bghira/SimpleTuner/blob/002cabbbe907362adf33bcc2715bc584bbe5255e"
OWN = frozenset({
    "model_family", "model_flavour", "base_model_precision", "data_backend_config",
    "validation_prompt_library", "checkpoint_step_interval", "caption_dropout_probability",
    "resolution_type", "aspect_bucket_rounding", "offload_during_startup", "vae_batch_size",
    "text_encoder_1_precision", "base_model_default_dtype", "lora_type",
    "push_checkpoints_to_hub", "tracker_project_name", "validation_num_inference_steps"})
"""Options only SimpleTuner's cmd_args.py spells so (at the pinned commit)."""
_DECISIVE = frozenset({"model_family", "base_model_precision", "data_backend_config",
                       "model_flavour"})
_NOT_FP8 = ("no_change", "int8-", "int4-", "int2-", "nf4-")


def _names(data: Any) -> set[str]:
    return {str(k).lstrip("-") for k in list(data)[:512]} if isinstance(data, dict) else set()


def score(data: Any) -> int:
    """Two of SimpleTuner's own options, one of them decisive (its model family, base-model
    precision, data backend file): a diffusion fine-tuner's config, not TrainingArguments."""
    top = _names(data)
    own = top & OWN
    if len(own) < 2 or not own & _DECISIVE:
        return 0
    return 20 + 3 * len(own)


def read(path: str, parsed: Parsed) -> ReaderOutput:
    """Every key as written, the leading ``--`` of an option name stripped."""
    facts, prov = flatten(parsed.data if isinstance(parsed.data, dict) else {}, parsed,
                          PREFIX, path)
    dashed = f"{PREFIX}.-"
    for name in [n for n in facts if n.startswith(dashed)]:
        plain = PREFIX + "." + name[len(PREFIX) + 1:].lstrip("-")
        value, where = facts.pop(name), prov.pop(name)
        if plain != PREFIX + "." and plain not in facts:
            facts[plain], prov[plain] = value, where
    return ReaderOutput(facts, prov)


def _fp8(v: View) -> tuple[Any, Any]:
    """``(intent.fp8, intent.backend)`` from ``base_model_precision``."""
    key = "base_model_precision"
    unknown = v.unknown(key)
    if unknown is not None:
        return unknown, None
    value = v.get(key, "no_change")
    if not isinstance(value, str):
        return Unknown(f"base_model_precision {str(value)[:40]!r} is no preset name"), None
    preset = value.strip().lower()
    if preset.startswith(_NOT_FP8):
        return False, None
    if preset == "fp8-torchao":
        return True, "torchao"
    if preset.startswith("fp8") and preset.endswith("-quanto"):
        return Unknown(f"base_model_precision {preset!r}: optimum-quanto qfloat8 weight storage; "
                       "whether its matmuls run in FP8 depends on the GPU and quanto's kernels"
                       ), None
    return Unknown(f"base_model_precision {preset[:40]!r} is not a preset this reader knows "
                   "(quantisation/__init__.py at 002cabbb)"), None


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    src = v.src("base_model_precision",
                "SimpleTuner default (base_model_precision no_change: no FP8)")
    fp8, backend = _fp8(v)
    out["fp8"] = (fp8, src)
    if backend is not None:
        # quantize_(base, float8_dynamic_activation_float8_weight()): an inference-style
        # dynamic scaling of the frozen base (granularity PerTensor by default: tensorwise),
        # not Float8Linear training
        out["backend"] = (backend, src)
        out["recipe"] = ("tensorwise", src)
    mp = v.get("mixed_precision", "bf16")
    if mp in ("bf16", "fp16", "no"):
        out["precision"] = ("fp32" if mp == "no" else mp,
                            v.src("mixed_precision", "SimpleTuner default (mixed_precision bf16)"))
    elif mp is not None:
        out["precision"] = (Unknown(f"mixed_precision {str(mp)[:40]!r} is not bf16, fp16 or no"),
                            v.src("mixed_precision"))
    ckpt = v.get("gradient_checkpointing")
    if isinstance(ckpt, bool):
        out["activation_checkpointing"] = (ckpt, v.src("gradient_checkpointing"))
    cp = v.int("context_parallel_size")
    if cp:
        out["cp"] = (cp, v.src("context_parallel_size"))
    batch = v.int("train_batch_size")
    if batch:
        out["micro_batch"] = (batch, v.src("train_batch_size"))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="SimpleTuner", formats=("json", "toml", "text"), score=score, read=read,
    derive=derive, precedence=35, distributions=("simpletuner",),
    # config.env: `export BASE_MODEL_PRECISION=...` lines, no command (simpletuner_env.FLAGS)
    launch=Launch(simpletuner_env.read_text, flags=simpletuner_env.FLAGS),
    defaults=(
        Default("base_model_precision", "no_change (no quantisation, no FP8)", "all",
                f"{_REPO}/simpletuner/helpers/training/quantisation/__init__.py#L268"),
        Default("mixed_precision", "bf16", "all",
                f"{_REPO}/documentation/OPTIONS.md#L460"),
    ),
)
"""Source of the line numbers: bghira/SimpleTuner at 002cabbb (see the module docstring)."""
