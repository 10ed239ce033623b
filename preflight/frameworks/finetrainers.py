"""finetrainers (a-r-r-o-w/finetrainers, huggingface/finetrainers): ``torchrun ... train.py`` or
``accelerate launch ... train.py`` with argparse ``--flags``, which its example scripts build in
bash arrays (``model_cmd=(...)``, ``"${model_cmd[@]}"``) and strings (``DDP_2="--parallel_backend
ptd --dp_degree 2 ..."``, ``parallel_cmd=($DDP_2)``).

Read at v0.1.0 (5ea04575, 2025-03-21; the flags below are unchanged at v0.2.0, 358b616f):
finetrainers/args.py ``_add_parallel_arguments`` (l.578-589: ``--parallel_backend accelerate|ptd``,
default accelerate; ``--pp_degree --dp_degree --dp_shards --cp_degree --tp_degree``, each 1 by
default), ``_add_model_arguments`` (l.593-625: ``--layerwise_upcasting_modules`` nargs "+",
choices ["transformer"], default []; ``--layerwise_upcasting_storage_dtype`` float8_e4m3fn |
float8_e5m2, default float8_e4m3fn; ``--transformer_dtype`` default bf16), ``--training_type``
(required, l.662). finetrainers/trainer/sft_trainer/trainer.py l.125-131: LoRA training with
"transformer" in the upcasting modules calls diffusers' ``apply_layerwise_casting(storage_dtype=
float8_*, compute_dtype=transformer_dtype)``: the frozen transformer weights are stored in FP8 and
upcast per layer, every matmul runs in BF16 (PR 316 calls it "fake" FP8: no FP8 GEMM, no
torchao or Transformer Engine). finetrainers/parallel/ptd.py l.71-73 requires the world size to
be the product of the five degrees; ``--dp_degree`` > 1 replicates the model (``replicate``, DDP,
l.454-455), ``--dp_shards`` > 1 shards it (FSDP2).

So ``intent.fp8`` is false (FP8 compute is never asked for here) and ``intent.fp8_weight_storage``
says whether the weights are kept in FP8, which the multi-GPU collectives must then carry
(finetrainers PR 316: "won't work on > 1 GPU training because of unimplemented cuda collective
operations for torch.float8* types").
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import megatron_walk
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading.launch import not_training
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.types import ReaderOutput

KIND = "finetrainers"
PREFIX = f"config.{KIND}"
_REPO = "https://github.com/a-r-r-o-w/finetrainers/blob/5ea04575c0a1d4c553080361705d140b65902437"
COMMAND = re.compile(r"--(?:parallel_backend|dp_shards|layerwise_upcasting_modules|"
                     r"layerwise_upcasting_storage_dtype|precomputation_items|"
                     r"flow_weighting_scheme)(?![\w-])")
"""Flags only finetrainers' parser has (args.py at v0.1.0): they mark its launch script, written
wherever the script keeps them (a string, an array) before the command that expands them."""
ENTRY = re.compile(r"^[ \t]*(?:from|import)[ \t]+finetrainers\b", re.M)
"""What finetrainers' train.py holds (``from finetrainers import BaseArgs, SFTTrainer, ...``)."""
MAX_LAUNCHES = 8
"""Training commands of one script walked (the examples have two, in an if/elif on BACKEND)."""
ARITY = megatron_walk.Arity(
    bare=frozenset({"enable_precomputation", "precomputation_once", "pin_memory",
                    "flow_resolution_shifting", "gradient_checkpointing", "enable_slicing",
                    "enable_tiling", "enable_model_cpu_offload", "push_to_hub", "allow_tf32",
                    "list_models"}),
    needs=frozenset({"parallel_backend", "pp_degree", "dp_degree", "dp_shards", "cp_degree",
                     "tp_degree", "model_name", "pretrained_model_name_or_path",
                     "layerwise_upcasting_storage_dtype", "transformer_dtype", "training_type",
                     "batch_size"}),
    multi=frozenset({"layerwise_upcasting_modules", "layerwise_upcasting_skip_modules_pattern"}))
"""argparse arity of args.py at v0.1.0: store_true flags, one-value flags, nargs "+"."""
_DEGREES = ("pp_degree", "dp_degree", "dp_shards", "cp_degree", "tp_degree")
_DTYPES = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16",
           "fp32": "fp32", "float32": "fp32"}


def score(data: Any) -> int:
    """finetrainers has no config file of its own (its dataset JSON is not a training config):
    its settings are flags of train.py, read from the launch script (:func:`read_text`)."""
    return 0


def read(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("finetrainers is read from the script that launches its train.py; pass "
                     "the launch script")


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """The flags of the ``train.py`` commands the script runs, walked as the shell runs it
    (arrays and strings expanded, ``if [ "$BACKEND" == ... ]`` decided from the script's own
    values): a flag in a string no command expands (``DDP_4=...``) is not the job's."""
    found = megatron_walk.commands(text, outer, _train_word, MAX_LAUNCHES)
    if found is None:
        return ReaderOutput(problems=(megatron_walk.not_walked(path, "its finetrainers flags were"),))
    found = [lr for lr in found if any(COMMAND.fullmatch(a.text.split("=", 1)[0])
                                       for a in lr.args)]
    if not found:
        return ReaderOutput()
    got = megatron_walk.read(path, text, found, PREFIX, ARITY)
    return ReaderOutput(got.facts, got.prov, tuple(got.problems))


def _train_word(word: str) -> bool:
    return word.endswith(".py") and not not_training(os.path.basename(word))


def _degree(v: View, key: str) -> int | Unknown:
    if v.unknown(key) is not None:
        return v.unknown(key) or Unknown(f"--{key}")
    if not v.has(key):
        return 1                       # argparse default (args.py l.585-589)
    n = v.int(key)
    return n if n is not None and n >= 1 else Unknown(f"--{key} {str(v.get(key))[:40]!r} is "
                                                       "not a positive integer")


def _storage(v: View) -> tuple[Any, str]:
    """Whether the transformer's weights are stored in FP8 (trainer.py l.125-131)."""
    mods_key, dtype_key, type_key = ("layerwise_upcasting_modules",
                                     "layerwise_upcasting_storage_dtype", "training_type")
    src = v.src(mods_key, f"finetrainers default (--layerwise_upcasting_modules []: "
                          f"{_REPO}/finetrainers/args.py#L613)")
    for key in (mods_key, dtype_key, type_key):
        if v.unknown(key) is not None:
            return v.unknown(key), v.src(key)
    mods = v.get(mods_key, [])
    mods = [mods] if isinstance(mods, str) else mods
    other = next((m for m in mods if m != "transformer"), None) if isinstance(mods, list) \
        else None
    if other is not None:     # `$MODS` from the environment, or a value argparse refuses
        return (other if isinstance(other, Unknown) else Unknown(
            f"--layerwise_upcasting_modules {str(other)[:80]!r}: decided at run time, or not "
            "a choice finetrainers takes (only 'transformer')")), src
    if not isinstance(mods, list) or "transformer" not in [str(m) for m in mods]:
        return False, src
    kind = v.get(type_key)
    if kind is None:
        return Unknown("--training_type is not given where the script was read (finetrainers "
                       "requires it; only LoRA training casts layerwise)"), src
    if str(kind) != "lora":
        return False, f"{v.src(type_key)} (layerwise casting applies to LoRA training only)"
    dtype = str(v.get(dtype_key, "float8_e4m3fn"))
    if not dtype.startswith("float8"):
        return Unknown(f"--layerwise_upcasting_storage_dtype {dtype[:40]!r} is none of "
                       "float8_e4m3fn, float8_e5m2 (finetrainers refuses it)"), v.src(dtype_key)
    return True, src


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    v = View(f, KIND, prov)
    out = IntentOut()
    out["fp8"] = (False, f"finetrainers has no FP8 compute option ({_REPO}/finetrainers/args.py: "
                         "layerwise upcasting stores weights in float8, computes in "
                         "--transformer_dtype)")
    out["fp8_weight_storage"] = _storage(v)
    dtype = v.get("transformer_dtype", "bf16")
    out["precision"] = (_DTYPES.get(str(dtype), Unknown(f"--transformer_dtype {str(dtype)[:40]!r}")),
                        v.src("transformer_dtype", "finetrainers default (--transformer_dtype bf16)"))
    degrees = {k: _degree(v, k) for k in _DEGREES}
    src = next((v.src(k) for k in _DEGREES if v.has(k)), "finetrainers default (every parallel "
               "degree 1)")
    known = {k: d for k, d in degrees.items() if isinstance(d, int)}
    unknown = next((d for d in degrees.values() if isinstance(d, Unknown)), None)
    if unknown is not None:
        out["distributed"] = (unknown, src)
        out["num_gpus"] = (unknown, src)
    else:
        world = 1
        for d in known.values():
            world *= d
        out["num_gpus"] = (world, src)
        out["distributed"] = ("fsdp2" if known["dp_shards"] > 1 else
                              "ddp" if known["dp_degree"] > 1 else "none", src)
        out["tp"] = (degrees["tp_degree"], v.src("tp_degree", src))
        out["cp"] = (degrees["cp_degree"], v.src("cp_degree", src))
    if v.get("gradient_checkpointing") is True:
        out["activation_checkpointing"] = (True, v.src("gradient_checkpointing"))
    return out.build()


FRAMEWORK = Framework(
    kind=KIND, title="finetrainers", formats=("text",), score=score, read=read,
    derive=derive, precedence=47, distributions=("finetrainers",), from_source=True,
    torchrun_size=True,
    defaults=(
        Default("--layerwise_upcasting_modules", "[] (no weight stored in FP8)", "finetrainers v0.1.0 - v0.2.0",
                f"{_REPO}/finetrainers/args.py#L613"),
        Default("--layerwise_upcasting_storage_dtype", "float8_e4m3fn", "finetrainers v0.1.0 - v0.2.0",
                f"{_REPO}/finetrainers/args.py#L614-L619"),
        Default("--dp_degree / --dp_shards", "1 / 1", "finetrainers v0.1.0 - v0.2.0",
                f"{_REPO}/finetrainers/args.py#L585-L589"),
    ),
    launch=Launch(read_text, command=COMMAND, entry=ENTRY, heredoc_values=True),
)
"""Source: a-r-r-o-w/finetrainers at v0.1.0 (see the module docstring)."""
