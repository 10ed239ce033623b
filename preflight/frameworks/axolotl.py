"""axolotl: its training YAML (``base_model``, ``sequence_len``, ``micro_batch_size``, ...).

axolotl builds TrainingArguments from this YAML, so the TrainingArguments keys it shares mean
what they mean to HF Trainer (:func:`.hf_trainer.training_args`); its own keys are read here:
``fp8: true`` asks for FP8 through accelerate with torchao (axolotl has no other FP8 backend;
the ``Float8LinearConfig`` it passes keeps torchao's default recipe, tensorwise),
``fp8_enable_fsdp_float8_all_gather``, and ``fsdp_config`` / ``fsdp_version`` (FSDP without
a ``fsdp:`` list). It was read as an HF Trainer config before (issue 14).

This module is the worked example of docs/internals.md ("Adding a framework").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.frameworks import axolotl_launch, axolotl_rl, hf_trainer
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.parse import Parsed
from preflight.reading.types import ReaderOutput

KIND = "axolotl"

# Keys only axolotl writes (axolotl src/axolotl/utils/schemas/config.py).
_MARKERS = frozenset({"base_model", "sequence_len", "micro_batch_size", "datasets", "adapter",
                      "lora_r", "lora_target_modules", "load_in_8bit", "load_in_4bit",
                      "sample_packing", "wandb_project", "special_tokens", "fsdp_version",
                      "base_model_config", "chat_template", "val_set_size", "rl"})


def score(data: Any) -> int:
    """axolotl when ``base_model`` and another axolotl key are there; ahead of HF Trainer,
    whose keys an axolotl YAML shares."""
    top = {str(k) for k in data}
    if "base_model" not in top or len(top & _MARKERS) < 2:
        return 0
    return hf_trainer.score(data) + 4 * len(top & _MARKERS)


_read_keys = hf_trainer.read_with_deepspeed(KIND)


def read(path: str, parsed: Parsed) -> ReaderOutput:
    """Every key as written under ``config.axolotl``; ``deepspeed: ds.json`` is followed; an RL
    job's ``base_model`` config.json read where it lies in the job (:mod:`.axolotl_rl`)."""
    got = _read_keys(path, parsed)
    facts, prov = dict(got.facts), dict(got.provenance)
    axolotl_rl.read_weights(path, facts, prov)
    return ReaderOutput(facts, prov, got.problems, got.linked)


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    a = View(f, KIND, prov)
    out = hf_trainer.training_args(a)
    if a.get("fp8") is True:
        src = a.src("fp8")
        out["backend"] = ("torchao", src)          # axolotl's FP8 path is torchao only
        out["recipe"] = ("tensorwise", src)
    _padding(a, out)
    axolotl_rl.rollout(a, out)
    if not a.get("fsdp") and a.any_prefix("fsdp_config"):   # fsdp_config alone means FSDP
        v2 = a.int("fsdp_version") == 2 or a.int("fsdp_config.fsdp_version") == 2
        out["distributed"] = ("fsdp2" if v2 else "fsdp1",
                              a.src("fsdp_version", a.src("fsdp_config")))
    return out.build()


def _padding(a: View, out: IntentOut) -> None:
    """What axolotl's collator pads a micro-batch's rows to (core/builders/causal.py at v0.18.0
    L386-L394; the multipack collators take the same ``pad_to_multiple_of``,
    utils/collators/batching.py L75-L79): ``pad_to_multiple_of`` (default 64) unless
    ``pad_to_sequence_len: false`` (the longest row only) or ``batch_flattening`` (no padding);
    ``pad_to_sequence_len: true`` pads every row to sequence_len rounded up to that multiple."""
    multiple = a.int("pad_to_multiple_of") or 64
    src = a.src("pad_to_multiple_of", "axolotl default (pad_to_multiple_of 64)")
    seq = a.int("sequence_len")
    if a.truthy("batch_flattening"):
        out["pad_multiple"] = (1, a.src("batch_flattening"))
    elif a.get("pad_to_sequence_len") is True:
        out["pad_multiple"] = ((multiple * -(-seq // multiple), a.src("pad_to_sequence_len"))
                               if seq else (multiple, src))
    elif a.get("pad_to_sequence_len") is False:
        out["pad_multiple"] = (1, a.src("pad_to_sequence_len"))
    else:
        out["pad_multiple"] = (multiple, src)


FRAMEWORK = Framework(
    kind=KIND, title="axolotl", formats=("yaml",), score=score, read=read, derive=derive,
    # its bf16/fp16 are TrainingArguments' and beat accelerate's mixed precision, as HF's do
    precedence=1, cancels_fp8_of=("accelerate",), explicit_precision_wins=True,
    zero_stage_rank=4, runs_on=("hf_trainer",), distributions=("axolotl",), rule_area="AXO",
    area_title="axolotl",
    # bool settings of its pydantic config (on/off too); bf16 "auto" and the like stay words
    bool_keys=("fp8", "fp8_enable_fsdp_float8_all_gather", "bf16", "fp16", "tf32",
               "torch_compile", "batch_flattening", "pad_to_sequence_len", "sample_packing",
               "gradient_checkpointing", "fsdp_config.cpu_ram_efficient_loading",
               "fsdp_config.fsdp_cpu_ram_efficient_loading", "trl.use_vllm",
               "trl.vllm_importance_sampling_correction"),
    bool_on_off=True,
    file_strings="words",
    file_strings_why=(
        "axolotl validates the YAML (yaml.safe_load, src/axolotl/cli/config.py l.254) with its "
        "pydantic AxolotlInputConfig in lax mode and uses model_dump (src/axolotl/utils/config/"
        "__init__.py l.439-498 @ v0.18.0): 'false' is False, '4' is 4"),
    launch=Launch(axolotl_launch.read, command=axolotl_launch.COMMAND,
                  trains=axolotl_launch.TRAINS),
    shape_keys=(("seq", ("sequence_len",)), ("micro_batch", ("micro_batch_size",)),
                ("model", ("base_model",))),
    references=(
        Reference("deepspeed", "deepspeed",
                  "opened relative to the directory `axolotl train` runs in"),
    ),
    defaults=(
        Default("fp8 recipe", "tensorwise (torchao Float8LinearConfig())", "all",
                "axolotl src/axolotl/core/trainers/base.py"),
    ),
)
