"""Soup (MakazhanAlpamys/Soup, ``soup-cli``): its ``soup.yaml`` and the ``soup train`` launch line.

How Soup runs a job (read at v0.73.3, 8ab26641; the same FP8 path at 24284533 of 2026-08-22):
``soup train --config soup.yaml`` (src/soup_cli/commands/train.py l.175-180: ``--config`` /
``-c``, default ``soup.yaml``) validates the YAML into ``SoupConfig`` (config/schema.py: ``base``,
``task``, ``backend`` transformers | unsloth | mlx, ``data``, ``training``, ``output``) and, for
the text tasks, builds HF ``TrainingArguments`` / TRL ``SFTConfig`` in code (trainer/sft.py
l.395-414, l.511): so the job runs on the HF Trainer (and accelerate), its YAML keys being Soup's
own (``lr``, ``epochs``, ``batch_size``), not TrainingArguments'.

FP8: ``training.quantization_aware`` is ``Union[bool, Literal["fp8"]]`` (schema.py l.1035-1041):
``"fp8"`` makes ``_apply_quantization_aware`` (trainer/sft.py l.1132-1150) call
``utils/fp8.apply_fp8_training(model, recipe=training.fp8_recipe)`` after LoRA, which runs
torchao's ``convert_to_float8_training(model, config=Float8LinearConfig.from_recipe_name(recipe))``
(utils/fp8.py l.60-96) with no hardware check: ``validate_fp8_config`` (the Hopper check) is called
from nowhere (Soup issue 835; PR 1044 added the gate later). ``fp8_recipe`` is tensorwise (default)
| rowwise | rowwise_with_gw_hp (schema.py l.1042-1049). ``quantization_aware: true`` is int8 QAT
(utils/qat.py), and ``training.quantization: fp8`` loads an FP8 checkpoint dequantized: neither
is FP8 training. Precision: ``bf16_fp16_flags(device)``, bf16 on a CUDA card that has it, fp16
otherwise (sft.py l.795-812); ``auto_mixed_precision`` picks from the model and the card at run
time (Unknown here). The mlx backend trains on Apple silicon (no CUDA FP8): Unknown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading import launch
from preflight.reading.parse import Parsed, flatten
from preflight.reading.types import ReaderOutput

KIND = "soup"
PREFIX = f"config.{KIND}"
_REPO = "https://github.com/MakazhanAlpamys/Soup/blob/8ab26641ed34e724018e696a93a06460f26c153e"
_TOP = frozenset({"base", "task", "modality", "backend", "data", "training", "output",
                  "experiment_name", "eval", "advise"})
_TRAINING = frozenset({"quantization_aware", "fp8_recipe", "lora", "epochs", "lr", "batch_size",
                       "quantization", "auto_mixed_precision", "grpo_fp16", "fp8_attention"})
_RECIPES = ("tensorwise", "rowwise", "rowwise_with_gw_hp")


def score(data: Any) -> int:
    """A ``base`` model string and a ``training`` mapping with Soup's own keys (``lr``,
    ``epochs``, ``quantization_aware``): SoupConfig's layout."""
    training = data.get("training")
    if not isinstance(data.get("base"), str) or not isinstance(training, dict):
        return 0
    own = _TRAINING & {str(k) for k in list(training)[:512]}
    if not own:
        return 0
    return 12 + 3 * len(own) + 2 * len(_TOP & {str(k) for k in data})


def read(path: str, parsed: Parsed) -> ReaderOutput:
    facts, prov = flatten(parsed.data if isinstance(parsed.data, dict) else {}, parsed,
                          PREFIX, path)
    return ReaderOutput(facts, prov)


def _fp8(v: View) -> tuple[Any, str]:
    key = "training.quantization_aware"
    why = v.src(key, "Soup default (quantization_aware false: no FP8)")
    unknown = v.unknown(key)
    if unknown is not None:
        return unknown, why
    value = v.get(key, False)
    if value == "fp8":
        return True, why
    if isinstance(value, bool):      # true is int8 QAT (utils/qat.py), not FP8
        return False, why
    return Unknown(f"quantization_aware {str(value)[:40]!r} is not true, false or 'fp8': "
                   "SoupConfig refuses it"), why


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    out.runs_on = ("hf_trainer",)     # TrainingArguments / SFTConfig built in code (sft.py l.511)
    fp8, src = _fp8(v)
    backend = v.get("backend", "transformers")
    if backend == "mlx" and fp8 is not False:
        fp8 = Unknown("backend mlx trains with MLX on Apple silicon; its FP8 path is not read")
        src = v.src("backend")
    out["fp8"] = (fp8, src)
    if fp8 is True:
        out["backend"] = ("torchao", src)        # convert_to_float8_training (utils/fp8.py)
        recipe = v.get("training.fp8_recipe", "tensorwise")
        out["recipe"] = (recipe if recipe in _RECIPES else Unknown(
            f"fp8_recipe {str(recipe)[:40]!r} is not one SoupConfig takes"),
            v.src("training.fp8_recipe", "Soup default (fp8_recipe tensorwise)"))
    if v.truthy("training.auto_mixed_precision"):
        out["precision"] = (Unknown("auto_mixed_precision picks bf16 or fp16 from the model and "
                                    "the card at run time"),
                            v.src("training.auto_mixed_precision"))
    else:
        out["precision"] = ("bf16", "Soup default (bf16 on a CUDA card that has it: "
                            "trainer/sft.py _resolve_mixed_precision)")
    ckpt = v.get("training.gradient_checkpointing")
    if isinstance(ckpt, bool):
        out["activation_checkpointing"] = (ckpt, v.src("training.gradient_checkpointing"))
    for key, name in (("data.max_length", "seq_len"), ("training.batch_size", "micro_batch")):
        got = v.int(key)
        if got:
            out[name] = (got, v.src(key))    # type: ignore[index]
    return out.build()


# `soup train [--config X | -c X]` (commands/train.py; the console script `soup`)
COMMAND = re.compile(r"(?<![\w./-])soup[ \t]+train(?![\w-])")
OTHER = re.compile(r"(?<![\w./-])soup[ \t]+(?:eval|export|merge|serve|chat|infer)(?![\w-])")
TRAINS = (("soup", "train"),)


def _train_args(out: launch.Out, words: list[launch.Token], variables: dict[str, str]) -> None:
    """``--config`` / ``-c`` (``=`` too), else Soup's default ``soup.yaml``."""
    for i, (word, pos) in enumerate(words):
        flag, eq, inline = word.partition("=")
        if flag in ("--config", "-c"):
            raw = inline if eq else (words[i + 1][0] if i + 1 < len(words) else None)
            at = pos if eq or i + 1 >= len(words) else words[i + 1][1]
            if raw is not None:
                out.link(launch.value(raw, variables), KIND, at, "soup train --config", own=True)
            return
    out.link("soup.yaml", KIND, words[0][1] if words else 0,
             "soup train (default --config soup.yaml)", own=True)


def read_text(path: str, text: str, outer: dict[str, str] | None = None) -> ReaderOutput:
    """A script running ``soup train``: its ``soup.yaml``, linked."""
    return launch.read_tool_script(path, text, outer, train=COMMAND, other=OTHER, kind=KIND,
                                   key="soup", train_args=_train_args,
                                   config_ends=(".yaml", ".yml"), skip_flags=True)


FRAMEWORK = Framework(
    kind=KIND, title="Soup", formats=("yaml",), score=score, read=read, derive=derive,
    precedence=31, runs_on=("hf_trainer",), distributions=("soup-cli",),
    launch=Launch(read_text, command=COMMAND, trains=TRAINS),
    shape_keys=(("seq", ("data.max_length",)), ("model", ("base",))),
    defaults=(
        Default("training.quantization_aware", "false (no FP8; true is int8 QAT)", "all",
                f"{_REPO}/src/soup_cli/config/schema.py#L1035-L1041"),
        Default("training.fp8_recipe", "tensorwise", "all",
                f"{_REPO}/src/soup_cli/config/schema.py#L1042-L1049"),
        Default("precision", "bf16 on a CUDA card that has it, else fp16", "all",
                f"{_REPO}/src/soup_cli/trainer/sft.py#L795-L812"),
    ),
)
"""Source of the line numbers: MakazhanAlpamys/Soup v0.73.3 (see the module docstring)."""
