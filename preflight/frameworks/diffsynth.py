"""DiffSynth-Studio (modelscope/DiffSynth-Studio): ``accelerate launch examples/<model>/
model_training/train.py --flags``, the framework's training script and its argparse options.

Read at 44c52da807c6c97e7f0501cf48f701736c7e9ce1 (2026-04). Each model's train.py builds its
parser from diffsynth/diffusion/parsers.py (``add_general_config``: ``--model_paths``,
``--model_id_with_origin_paths``, ``--fp8_models``, ``--offload_models``, ``--lora_base_model``,
``--use_gradient_checkpointing`` ...) and loads the pipeline with ``torch_dtype=torch.bfloat16``
(examples/qwen_image/model_training/train.py l.31). ``--fp8_models`` (default None) names the
models whose weights are kept in ``float8_e4m3fn``: diffsynth/diffusion/training_module.py
``parse_vram_config(fp8=True)`` sets offload / onload / preparing dtype float8_e4m3fn and
``computation_dtype`` bfloat16, so the matmuls run in BF16 on upcast weights
(docs/en/Training/FP8_Precision.md: "does not support native FP8 precision training"). FP8 is
storage, not an FP8 GEMM recipe: ``intent.backend`` is ``none``. The float8 tensors still cross
NCCL in a multi-GPU run, which refuses FP8 collectives below sm_90 ("FP8 reduction support
begins with sm90 capable devices", DiffSynth issue 1386 on A800). No flag of DiffSynth selects
FP8 compute; ``accelerate launch --mixed_precision fp8`` would be accelerate's (read there).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._record import Default, Framework
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading import launch
from preflight.reading.parse import Parsed
from preflight.reading.types import ReaderOutput

KIND = "diffsynth"
PREFIX = f"config.{KIND}"
_REPO = ("https://github.com/modelscope/DiffSynth-Studio/blob/"
         "44c52da807c6c97e7f0501cf48f701736c7e9ce1")
ENTRY = re.compile(r"^[ \t]*(?:from|import)[ \t]+diffsynth\b", re.M)
"""What the text of DiffSynth's train.py holds (``from diffsynth.diffusion import *``)."""
OWN_FLAGS = frozenset({"model_id_with_origin_paths", "fp8_models", "lora_base_model",
                       "remove_prefix_in_ckpt", "dataset_metadata_path", "offload_models"})
"""Options of add_general_config no other trainer spells so: a train.py not found here is
DiffSynth's when two of them are on its line."""
_BARE = frozenset({"use_gradient_checkpointing", "use_gradient_checkpointing_offload",
                   "find_unused_parameters", "zero_cond_t", "initialize_model_on_cpu",
                   "align_to_opensource_format"})
"""store_true options of parsers.py and the model scripts: never take a value."""


def launched(script: str, naming: str, args: list[str]) -> bool:
    """The script an accelerate launch line of ``naming`` runs is DiffSynth's: found here and
    importing ``diffsynth``, or not found and given two of its own options."""
    if not script.endswith(".py") or "$" in script:
        return False
    from preflight.reading.launchroot import locate_script
    from preflight.reading.parse import ParseError, read_text
    found = locate_script(script, naming)
    if found is None:
        flags = {a[2:].split("=", 1)[0] for a in args if a.startswith("--")}
        return len(flags & OWN_FLAGS) >= 2
    try:
        text = read_text(found)
    except (ParseError, OSError):
        return False
    return ENTRY.search(text) is not None


def script_args(out: launch.Out, words: list[launch.Token], variables: dict[str, str]) -> None:
    """train.py's options -> ``config.diffsynth.<option>`` (a bare store_true one is true)."""
    found, _ = launch.flags(words, _BARE, stop_at_positional=False)
    for flag, raw, pos in found:
        if flag in _BARE and raw is None:
            out.put(f"{PREFIX}.{flag}", True, pos)
    out.put_flags([f for f in found if not (f[0] in _BARE and f[1] is None)], KIND, variables)
    out.put(f"{PREFIX}.cli.launch", True, words[0][1] if words else 0)


def score(data: Any) -> int:
    """DiffSynth has no config file (no formats): its options are flags of train.py, read on
    the accelerate launch line (:func:`script_args`)."""
    return 0


def read(path: str, parsed: Parsed) -> ReaderOutput:
    return ReaderOutput({}, {})


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    key = "fp8_models"
    src = v.src(key, "DiffSynth default (--fp8_models None: every model in bfloat16)")
    value = v.get(key)
    fp8: Any
    if v.unknown(key) is not None:
        fp8 = v.unknown(key)
    elif value is None:
        fp8 = False
    elif isinstance(value, str) and ("$" in value or "`" in value):
        fp8 = Unknown(f"--fp8_models {value[:60]!r}: a shell variable not set in the script")
    elif isinstance(value, str):
        fp8 = bool(value.strip(" ,"))
    else:
        fp8 = Unknown(f"--fp8_models {str(value)[:40]!r} is not a comma-separated list")
    out["fp8"] = (fp8, src)
    if fp8 is True:
        # weights stored in float8_e4m3fn, computation in bfloat16 (parse_vram_config): no FP8
        # GEMM recipe, no TE or torchao conversion
        out["backend"] = ("none", src)
    out["precision"] = ("bf16", "DiffSynth train.py (from_pretrained(torch_dtype=torch.bfloat16))")
    ckpt = v.get("use_gradient_checkpointing")
    if ckpt is True:
        out["activation_checkpointing"] = (True, v.src("use_gradient_checkpointing"))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="DiffSynth-Studio", formats=(), score=score, read=read,
    derive=derive, precedence=36, distributions=("diffsynth",),
    defaults=(
        Default("--fp8_models", "None (no model stored in FP8)", "all",
                f"{_REPO}/diffsynth/diffusion/parsers.py"),
        Default("computation dtype", "bfloat16 (FP8 is storage only)", "all",
                f"{_REPO}/diffsynth/diffusion/training_module.py"),
    ),
)
"""Source: modelscope/DiffSynth-Studio at 44c52da8 (see the module docstring)."""
