"""LLaMA-Factory: its training YAML (``stage``, ``finetuning_type``, ``template``, ...).

LLaMA-Factory builds TrainingArguments from the same YAML, so those keys mean what they mean to
HF Trainer (:func:`.hf_trainer.training_args`). Its FP8 keys (``ModelArguments``): ``fp8``,
``fp8_backend`` (``auto`` | ``torchao`` | ``te`` | ``msamp``) and
``fp8_enable_fsdp_float8_all_gather``. With ``auto`` or ``torchao`` it builds torchao's
``Float8LinearConfig.from_recipe_name("rowwise")`` but only logs how many kwargs it made: nothing
hands them to the Accelerator (v0.9.5 train/fp8_utils.py configure_fp8_environment; only the
``te`` backend patches ``Accelerator.__init__``), so accelerate converts with its own default,
``Float8LinearConfig()``: tensorwise. The all-gather key is only logged (FP8D-LF-0001). It was
read as an HF Trainer config before (issue 14).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import hf_trainer, llamafactory_launch
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.parse import Parsed
from preflight.reading.readers import where
from preflight.reading.types import ReaderOutput

KIND = "llamafactory"

_STAGES = frozenset({"pt", "sft", "rm", "ppo", "dpo", "kto"})
_MARKERS = frozenset({"finetuning_type", "template", "cutoff_len", "lora_target", "plot_loss",
                      "preprocessing_num_workers", "max_samples", "overwrite_cache",
                      "fp8_backend", "fp8_enable_fsdp_float8_all_gather"})
_BACKENDS = {"te": "te", "torchao": "torchao", "auto": "torchao"}
# Only `te` is handed to accelerate (a patched Accelerator.__init__); any other value is left to
# accelerate's auto-detection, torchao first, then Transformer Engine, then MS-AMP (accelerate
# accelerator.py from v1.5.0; FP8D-LF-0013).
_MSAMP = ("LLaMA-Factory does not hand fp8_backend msamp to accelerate (v0.9.5 fp8_utils.py), "
          "which picks torchao, then Transformer Engine, then MS-AMP, whichever is installed")


V1_KEYS = frozenset({"model_class", "kernel_config", "quant_config", "dist_config",
                     "init_config", "peft_config", "sample_backend", "batching_strategy",
                     "lr_scheduler_config", "mp_shard_size", "mp_replicate_size", "cp_mode"})
"""Fields only LLaMA-Factory's v1 schema has (src/llamafactory/v1/config/model_args.py,
training_args.py at ff6d4d12): a v1 YAML has no ``stage`` and is no TrainingArguments file."""
_V1_FP8 = ("LLaMA-Factory v1 has no FP8 training setting (no fp8 or float8 anywhere in "
           "src/llamafactory/v1 at ff6d4d12; its quant_config is bitsandbytes)")


def score(data: Any) -> int:
    """LLaMA-Factory when ``stage`` is one of its stages or ``finetuning_type`` is there, or a
    v1 YAML (:data:`V1_KEYS`)."""
    top = {str(k) for k in data}
    if str(data.get("stage")) not in _STAGES and "finetuning_type" not in top:
        return 10 + 4 * len(top & V1_KEYS) if top & V1_KEYS else 0
    return hf_trainer.score(data) + 10 + 4 * len(top & _MARKERS)


def _derive_v1(v: View, f: Mapping[str, Any]) -> Derived:
    """A v1 YAML (its own trainer, bf16 on by default): FP8 not asked, unless a key names FP8
    (a later v1's setting, not read: undetermined)."""
    out = IntentOut()
    named = next((n for n in f if n.startswith(f"config.{KIND}.") and
                  ("fp8" in n.lower() or "float8" in n.lower())), None)
    if named is not None:
        out["fp8"] = (Unknown(f"{named[len(KIND) + 8:]}: an FP8 setting of a LLaMA-Factory v1 "
                              "newer than fp8-doctor reads"), v.src(named[len(KIND) + 8:]))
    else:
        out["fp8"] = (False, v.src("quant_config", _V1_FP8))
    off = v.has("bf16") and not v.truthy("bf16")
    out["precision"] = ("fp32" if off else "bf16", v.src(
        "bf16", "LLaMA-Factory v1 default (bf16: true; v1/config/training_args.py)"))
    return out.build()


_read_keys = hf_trainer.read_with_deepspeed(KIND)

def read(path: str, parsed: Parsed) -> ReaderOutput:
    """Every key as written under ``config.llamafactory`` (``deepspeed: ds.json`` followed); with
    ``fp8: true`` and ``fp8_backend: te`` also the accelerate settings that amount to
    (``config.accelerate.kwargs_handlers`` and the handler's fields, at the ``fp8_backend``
    line), so accelerate's rules about recipe handlers reach the job."""
    out = _read_keys(path, parsed)
    data = parsed.data if isinstance(parsed.data, dict) else {}
    facts = llamafactory_launch.te_handler_facts(data.get("fp8"), data.get("fp8_backend"))
    if facts:
        src, _ = where(path, parsed, ("fp8_backend",) if "fp8_backend" in data else ("fp8",))
        out.facts.update(facts)
        out.provenance.update(dict.fromkeys(facts, src))
    return out


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    if not v.has("stage") and not v.has("finetuning_type") and any(
            v.has(k) or any(n.startswith(f"config.{KIND}.{k}.") for n in f) for k in V1_KEYS):
        return _derive_v1(v, f)
    out = hf_trainer.training_args(v)
    if not v.truthy("disable_gradient_checkpointing"):
        # LLaMA-Factory checkpoints by default, through torch.utils.checkpoint with
        # use_reentrant=True (v0.9.5 hparams/model_args.py disable_gradient_checkpointing=False,
        # use_reentrant_gc=True; model/model_utils/checkpointing.py prepare_model_for_training)
        out["activation_checkpointing"] = (True, v.src(
            "gradient_checkpointing" if v.truthy("gradient_checkpointing") else None,
            "LLaMA-Factory default (disable_gradient_checkpointing: false)"))
    if v.get("fp8") is True:
        raw = str(v.get("fp8_backend", "auto")).lower()
        backend = _BACKENDS.get(raw)
        bsrc = v.src("fp8_backend", "LLaMA-Factory default (fp8_backend: auto -> torchao)")
        if backend is not None:
            out["backend"] = (backend, bsrc)
        elif raw == "msamp":
            out["backend"] = (Unknown(_MSAMP), bsrc)
        if backend == "torchao":
            # the rowwise config fp8_utils.py builds is discarded (v0.9.5 L144-145): accelerate's
            # AORecipeKwargs() default applies
            out["recipe"] = ("tensorwise", bsrc)
        else:
            out.discard("recipe")
    _packing(v, out)
    return out.build()


def _packing(v: View, out: IntentOut) -> None:
    """Packing and padding (v0.9.5): ``packing`` defaults to on for ``stage: pt`` only
    (hparams/data_args.py), ``neat_packing`` implies it; a packed row is padded to cutoff_len + 1
    tokens (data/processor/supervised.py L218-L231) and the SFT collator pads to a multiple of 8
    (train/sft/workflow.py L65), so a packed row holds the multiple of 8 above cutoff_len."""
    packing = v.truthy("packing") or v.truthy("neat_packing")
    if not v.has("packing") and not v.has("neat_packing"):
        packing = str(v.get("stage")) == "pt"
        out["packing"] = (packing, "LLaMA-Factory default (packing on for stage pt only)")
    else:
        out["packing"] = (packing, v.src("neat_packing" if v.truthy("neat_packing") else "packing"))
    cutoff = v.int("cutoff_len") or 2048
    if packing:
        out["pad_multiple"] = (-(-(cutoff + 1) // 8) * 8,
                               v.src("cutoff_len", "LLaMA-Factory default (cutoff_len 2048)"))
    else:
        out["pad_multiple"] = (8, "LLaMA-Factory SFT collator (pad_to_multiple_of 8)")


FRAMEWORK = Framework(
    kind=KIND, title="LLaMA-Factory", formats=("yaml", "json"), score=score, read=read,
    derive=derive, precedence=2, cancels_fp8_of=("accelerate",), explicit_precision_wins=True,
    zero_stage_rank=5, runs_on=("hf_trainer",), distributions=("llamafactory",),
    rule_area="LF", area_title="LLaMA-Factory",
    # bool fields of its argument dataclasses (HfArgumentParser / parse_dict: 1 is true)
    bool_keys=("fp8", "fp8_enable_fsdp_float8_all_gather", "bf16", "fp16", "pure_bf16",
               "disable_gradient_checkpointing", "packing", "neat_packing"),
    file_strings="truth",
    file_strings_why=(
        "LLaMA-Factory loads it with OmegaConf.load, OmegaConf.to_container and "
        "HfArgumentParser.parse_dict, which keep the string (src/llamafactory/hparams/parser.py "
        "l.85-107 @ v0.9.5); the dataclass then tests its truth"),
    launch=Launch(llamafactory_launch.read, command=llamafactory_launch.COMMAND,
                  trains=llamafactory_launch.TRAINS),
    shape_keys=(("seq", ("cutoff_len",)), ("micro_batch", ("per_device_train_batch_size",)),
                ("model", ("model_name_or_path",))),
    references=(
        Reference("deepspeed", "deepspeed",
                  "opened relative to the directory `llamafactory-cli train` runs in (its "
                  "examples name examples/deepspeed/*.json from the repository root)"),
    ),
    defaults=(
        Default("fp8_backend", "auto (torchao through accelerate's default config: tensorwise)",
                "LLaMA-Factory 0.9.5", "src/llamafactory/train/fp8_utils.py"),
    ),
)
