"""ms-swift: ``megatron sft|pt|rlhf ...`` (its Megatron path) and ``swift sft|pt|rlhf ...`` (its
Transformers / DeepSpeed path) command lines, flags with underscores.

``megatron sft --fp8_recipe blockwise --fp8_format e4m3 --tensor_model_parallel_size 2`` passes
Megatron's own arguments by their dest names, so intent comes from the Megatron derivation
(:func:`.megatron.megatron_intent`) over ``config.swift.*``; it was "cannot tell which
framework" before (issue 14). ms-swift takes the compute dtype from the model's config unless
``--torch_dtype`` (or ``--bf16``/``--fp16``) says, so Megatron's fp32 default does not apply.
``swift sft --deepspeed zero3`` names one of ms-swift's bundled DeepSpeed configs (zero0 ...
zero3_offload) or a JSON file, which is followed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from packaging.version import Version

from preflight.base.versions import comparison_key
from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import ckptname, swift_walk
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.frameworks.megatron import megatron_intent
from preflight.frameworks.megatron_args import read_args_text
from preflight.reading.boolflags import refuse_empty
from preflight.reading.launch import BIN, blank_commands, find
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.refs import named
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

KIND = "swift"
PREFIX = f"config.{KIND}"
COMMAND = re.compile(BIN + r"(megatron|swift)[ \t]+(sft|pt|rlhf|export|train)\b")
# The commands that train, and those that do not (ROUTE_MAPPING of swift/cli/main.py and
# swift/cli/_megatron/main.py at v4.5.2): a script that trains and then exports, infers or merges
# has its training command's settings; the others' flags are blanked before reading.
TRAINING = re.compile(BIN + r"(megatron|swift)[ \t]+(sft|pt|rlhf|train)\b")
OTHER = re.compile(BIN + r"(?:megatron[ \t]+export|swift[ \t]+(?:infer|merge-lora|web-ui|"
                   r"deploy|rollout|sample|export|eval|app))\b")
_V3_7, _V3_11, _V4_3, _V4_4_3 = Version("3.7"), Version("3.11"), Version("4.3"), Version("4.4.3")
_DTYPES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16",
           "float32": "fp32", "fp32": "fp32"}


def score(data: Any) -> int:
    """ms-swift is read from command lines only (its ``--config`` YAML is not read yet)."""
    return 0


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("ms-swift is read from its `megatron sft` / `swift sft` command lines; "
                     "pass the launch script")


_BOOL_KEYS = ("merge_lora", "save_safetensors", "fp8_param_gather", "bf16", "fp16",
              "padding_free", "sequence_parallel", "gradient_checkpointing")


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """Flags of the script's ms-swift command line(s), ``--deepspeed x.json`` followed; a
    script that trains has only its training commands' flags.

    The script is walked as the shell runs it (:func:`swift_walk.read`, issue 22): a flag in a
    comment, an ``echo``, a variable no command expands or an ``if`` arm the text does not
    decide is not the command's. A script past the shell kit's bounds is read text-wide as
    before (:data:`OTHER` blanked)."""
    walked = swift_walk.read(path, text, outer, PREFIX)
    if walked is not None:
        facts, prov, problems = walked
        return _finish(path, facts, prov, problems)
    command = find(TRAINING, text)
    if command is not None:
        text = blank_commands(text, OTHER)
    else:
        command = find(COMMAND, text)
    out = read_args_text(path, text, outer, prefix=PREFIX)
    facts, prov = dict(out.facts), dict(out.provenance)
    if command is not None:
        line = text.count("\n", 0, command.start()) + 1
        facts[f"{PREFIX}.command"] = f"{command.group(1)} {command.group(2)}"
        prov[f"{PREFIX}.command"] = Source(path, line)
    return _finish(path, facts, prov, list(out.problems))


def _finish(path: str, facts: dict[str, Any], prov: dict[str, Any],
            problems: list[ConfigProblem]) -> ReaderOutput:
    """ms-swift's true/false words as bools, refused bool values, ``--deepspeed`` followed."""
    for name, value in facts.items():     # ms-swift's flags take true/false (argparse bools)
        if isinstance(value, str) and value.lower() in {"true", "false"}:
            facts[name] = value.lower() == "true"
    problems = [*problems, *refuse_empty(facts, prov, path, PREFIX, _BOOL_KEYS)]
    ds = facts.get(f"{PREFIX}.deepspeed")
    linked: tuple[Linked, ...] = ()
    if isinstance(ds, str) and ds.endswith(".json") and "$" not in ds:
        where = prov[f"{PREFIX}.deepspeed"]
        linked = (named(ds, "deepspeed", path, where, key="--deepspeed",
                        line=getattr(where, "line", None)),)
    return ReaderOutput(facts, prov, tuple(problems), linked)


def _padding_to(s: View, f: Mapping[str, Any]) -> tuple[Any, str]:
    """What ms-swift's Megatron collator pads every micro-batch to (``get_padding_to``), by the
    ms-swift installed: read at v3.7.0 - v3.9.0 (megatron/train/sft.py), v3.10.0 - v4.5.2
    (megatron/utils/utils.py). FP8 padding from 3.7 (max(p*8, 16)), blockwise x128 and fused
    attention x64 from 3.11, x16 from 4.3, MXFP8 x32 from 4.4.3 (PR 9722)."""
    version = f.get("pkg.ms-swift.version")
    key = comparison_key(version) if isinstance(version, str) else None
    if key is None:
        why = (version.reason if isinstance(version, Unknown) else "not installed here"
               if version is None else f"{str(version)[:40]!r}")
        return (Unknown(f"ms-swift pads packed batches by version (get_padding_to) and ms-swift "
                        f"is {why} (--assume pkg.ms-swift=V)"), "pkg.ms-swift.version")
    tp, cp = s.int("tensor_model_parallel_size") or 1, s.int("context_parallel_size") or 1
    pad = tp if tp > 1 and s.truthy("sequence_parallel") else None
    if cp > 1:
        pad = (pad or 1) * cp
    origin = pad
    recipe = s.get("fp8_recipe")
    fp8 = s.get("fp8_format") is not None or (key >= _V4_3 and s.get("fp4_format") is not None)
    if recipe == "blockwise" and key >= _V3_11:
        pad = (pad or 1) * 128
    elif recipe == "mxfp8" and key >= _V4_4_3:
        pad = (pad or 1) * 32
    elif fp8 and key >= _V4_3:
        pad = (pad or 1) * 16
    elif fp8 and key >= _V3_7:
        pad = max((pad or 1) * 8, 16)
    if s.get("attention_backend") == "fused" and key >= _V3_11:
        pad = max(pad or 1, (origin or 1) * 64)
    return pad or 1, f"ms-swift {version} get_padding_to"


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    s = View(f, KIND, prov)
    if str(s.get("command", "")).startswith("megatron"):
        out = megatron_intent(s, f, prov)
        out.runs_on = ("megatron",)   # megatron-core builds the model
        # Megatron-SWIFT packs every micro-batch into one padding-free (THD) sequence unless
        # --padding_free false (default True; --packing forces it), padded by get_padding_to.
        packed = s.truthy("packing") or not s.has("padding_free") or s.truthy("padding_free")
        out["packing"] = (packed, s.src("packing", s.src("padding_free",
                                                        "ms-swift default (padding_free true)")))
        if s.int("max_length"):
            out["seq_len"] = (s.int("max_length"), s.src("max_length"))
        out["pad_multiple"] = _padding_to(s, f)
    else:
        out = IntentOut()
        out.runs_on = ("hf_trainer",)   # swift sft: a Trainer subclass
        ds = s.get("deepspeed")
        if isinstance(ds, str):
            out["distributed"] = ("deepspeed", s.src("deepspeed"))
            out.runs_on = ("hf_trainer", "deepspeed")
            stage = re.match(r"zero(\d)", ds)
            if stage:       # ms-swift's bundled swift/llm/ds_config/zero<N>*.json
                out["zero_stage"] = (int(stage.group(1)), s.src("deepspeed"))
    if s.get("command") == "swift rlhf" and str(s.get("rlhf_type", "")).lower() == "grpo":
        _rollout(s, out)
    dtype = s.get("torch_dtype")
    if not (s.truthy("bf16") or s.truthy("fp16")):
        out["precision"] = ((_DTYPES.get(str(dtype).lower(), Unknown(f"torch_dtype {dtype!r}")),
                             s.src("torch_dtype")) if dtype is not None else
                            (Unknown("ms-swift takes the dtype from the model's config "
                                     "(--torch_dtype not given)"), "intent"))
    return out.build()


# GRPO's rollout arguments: swift/trainers/arguments.py l.205 (vllm_quantization: None, passed to
# vLLM as quantization, l.236), l.258-259 (use_vllm False, vllm_mode colocate) @ v3.10.0;
# swift/rlhf_trainers/args_mixin.py l.49, l.169-170 @ v4.5.2 (the same defaults). Without vLLM
# the policy model itself generates (PtEngine), in the training dtype.
_ROLL = "ms-swift v3.10.0 swift/trainers/arguments.py"


def _rollout(s: View, out: IntentOut) -> None:
    """``swift rlhf --rlhf_type grpo``: the rollout engine and whether it runs FP8 (vLLM's
    ``quantization`` from ``--vllm_quantization``; none given: the model dtype)."""
    use = s.facts.get(f"{PREFIX}.use_vllm")
    if isinstance(use, Unknown):
        out["rollout.engine"] = out["rollout.fp8"] = (use, s.src("use_vllm"))
        return
    if use is not True:
        where = s.src("use_vllm", f"{_ROLL}:258 (use_vllm: False)")
        out["rollout.engine"] = ("hf", where)
        out["rollout.fp8"] = (False, f"{where}: the policy model generates (PtEngine), in the "
                                     "training dtype")
        return
    out["rollout.engine"] = ("vllm", s.src("use_vllm"))
    quant = s.facts.get(f"{PREFIX}.vllm_quantization")
    if isinstance(quant, Unknown):
        out["rollout.fp8"] = (quant, s.src("vllm_quantization"))
    elif quant is not None and str(quant).lower() not in ("none", "null", ""):
        on = str(quant).lower() == "fp8"
        out["rollout.fp8"] = (on, s.src("vllm_quantization"))
        if on:      # vLLM's online dynamic FP8: per-tensor weight scales
            out["rollout.recipe"] = ("tensorwise", s.src("vllm_quantization"))
    elif ckptname.says_fp8(str(s.get("model", ""))[:4096]):
        out["rollout.fp8"] = (Unknown(f"--model {str(s.get('model'))[:80]!r} looks like an FP8 "
                                      "checkpoint: vLLM follows its quantization_config, not "
                                      "read here"), s.src("model"))
    else:
        server = str(s.get("vllm_mode", "")).lower() == "server"
        out["rollout.fp8"] = (False, f"{_ROLL}:205 (vllm_quantization: None): vLLM runs in the "
                                     "model dtype" + (
                                         "; the vLLM server (`swift rollout`, started outside "
                                         "this script) taken at the same default"
                                         if server else ""))


FRAMEWORK = Framework(
    kind=KIND, title="ms-swift", formats=("text",), score=score, read=read_yaml, derive=derive,
    precedence=10, zero_stage_rank=6, distributions=("ms-swift",), rule_area="SWIFT",
    area_title="ms-swift", launch=Launch(read_text, command=COMMAND, heredoc_values=True),
    # bool fields of its argument dataclasses (HfArgumentParser: `--merge_lora 1` is true;
    # swift/megatron/arguments/megatron_args.py l.679, l.688 @ v4.5.2)
    bool_keys=_BOOL_KEYS,
    file_strings="words",
    file_strings_why=(
        "ms-swift turns a YAML/JSON config into --key str(value) flags for HfArgumentParser "
        "(swift/cli/main.py l.38-71 @ v4.5.2), whose string_to_bool converts them"),
    shape_keys=(("seq", ("max_length",)), ("micro_batch", ("micro_batch_size",)),
                ("model", ("model",))),
    references=(
        Reference("--deepspeed", "deepspeed",
                  "a bundled name (zero0 ... zero3_offload) or a JSON path relative to the "
                  "launch directory"),
    ),
    defaults=(
        Default("--torch_dtype", "the model's config.json torch_dtype", "all",
                "swift/llm/argument/base_args/model_args.py"),
    ),
)
