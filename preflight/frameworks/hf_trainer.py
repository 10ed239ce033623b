"""HF Trainer: ``TrainingArguments`` as YAML/JSON (HfArgumentParser, TRL) or as flags on a launch
line (:func:`script_args`); a ``deepspeed: ds.json`` key or ``--deepspeed ds.json`` flag is
followed.

Its explicit ``bf16`` / ``fp16`` replace accelerate's mixed precision (Trainer sets
``mixed_precision`` from its own fields), and it reads ``ACCELERATE_MIXED_PRECISION`` itself
when they are off.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks import (
    axolotl_launch,
    diffsynth,
    hfmoe,
    llamafactory_launch,
    trl,
    trl_rollout,
)
from preflight.frameworks._claim import FOREIGN, owns
from preflight.frameworks._record import Default, Framework, Launch, Reference
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading import launch
from preflight.reading.boolflags import refuse_empty
from preflight.reading.parse import Parsed
from preflight.reading.pyfacts import PyOut
from preflight.reading.pysource import Module
from preflight.reading.readers import link, read_plain
from preflight.reading.types import ReaderOutput

KIND = "hf_trainer"
PREFIX = f"config.{KIND}"
HINT = re.compile(r"--(?:output_dir|per_device_train_batch_size)\b")
"""Flags every HF Trainer command line carries (HfArgumentParser requires ``--output_dir``
before transformers 4.50)."""


OWN_KEYS = frozenset({
    "per_device_train_batch_size", "per_device_eval_batch_size", "num_train_epochs",
    "logging_strategy", "logging_first_step",
    "save_strategy", "save_total_limit", "eval_strategy", "evaluation_strategy",
    "lr_scheduler_type", "warmup_ratio", "model_name_or_path", "report_to", "optim",
    "gradient_checkpointing", "torch_compile", "overwrite_output_dir", "do_train", "do_eval",
    "adam_beta1", "adam_beta2", "adam_epsilon", "bf16_full_eval",
    "dataloader_num_workers", "remove_unused_columns", "load_best_model_at_end",
    "metric_for_best_model", "push_to_hub", "hub_model_id", "ddp_find_unused_parameters",
    "gradient_checkpointing_kwargs", "use_liger_kernel", "eval_accumulation_steps"})
"""TrainingArguments fields (transformers v4.57.0 training_args.py) no other trainer's file
spells so: one of them must be there before a file is read as TrainingArguments (``seed``,
``output_dir`` or ``learning_rate`` alone claimed AReaL's YAMLs; ``save_steps`` /
``logging_steps`` claimed ROLL's, holdout9; frameworks/_claim.py GENERIC)."""


def score(data: Any) -> int:
    """How strongly a parsed mapping looks like TrainingArguments (0 without one of its own
    fields)."""
    top = {str(k) for k in data}
    if not owns(top, OWN_KEYS) or owns(top, FOREIGN):
        return 0
    s = 3 * len(top & {"output_dir", "per_device_train_batch_size",
                       "per_device_eval_batch_size", "num_train_epochs", "logging_steps",
                       "save_steps", "save_strategy", "eval_strategy",
                       "evaluation_strategy", "lr_scheduler_type", "warmup_ratio",
                       "model_name_or_path", "report_to", "optim",
                       "gradient_checkpointing", "torch_compile"})
    if not s:
        # keys every trainer config has (seed, learning_rate) are no evidence alone: an AReaL
        # YAML with `seed` was read as TrainingArguments, its FP8 "no" (holdout8)
        return 0
    s += len(top & {"learning_rate", "max_steps", "gradient_accumulation_steps", "seed",
                    "weight_decay", "warmup_steps", "deepspeed", "fsdp"})
    for key in ("bf16", "fp16"):
        if isinstance(data.get(key), bool):
            s += 1
    if top & {"log_history", "global_step", "best_model_checkpoint"}:
        s = 0   # trainer_state.json in a checkpoint folder, not the job's arguments
    return s


def read_with_deepspeed(kind: str) -> Callable[[str, Parsed], ReaderOutput]:
    """A reader of every key as written under ``config.<kind>`` that follows a
    ``deepspeed: ds.json`` key to the DeepSpeed config (TrainingArguments, and the frameworks
    built on it: axolotl, LLaMA-Factory)."""
    def read(path: str, parsed: Parsed) -> ReaderOutput:
        out = read_plain(f"config.{kind}")(path, parsed)
        data = parsed.data if isinstance(parsed.data, dict) else {}
        if any(isinstance(data.get(k), str) for k in hfmoe.MODEL_KEYS):
            facts, prov = dict(out.facts), dict(out.provenance)
            hfmoe.read_model(kind, path, data, facts, prov)    # the model's config.json
            out = ReaderOutput(facts, prov, out.problems, out.linked)
        ds = data.get("deepspeed")
        if isinstance(ds, str) and ds.endswith(".json"):
            linked, problems = link(path, parsed, ("deepspeed",), ds, "deepspeed")
            return ReaderOutput(out.facts, out.provenance, tuple(problems), tuple(linked))
        return out
    return read


read_hf_trainer = read_with_deepspeed("hf_trainer")


BOOL_KEYS = ("bf16", "fp16", "tf32", "bf16_full_eval", "fp16_full_eval",
             "gradient_checkpointing", "torch_compile", "use_cpu")
"""TrainingArguments bool fields: HfArgumentParser gives them string_to_bool (`--bf16 1`)."""


def script_args(out: launch.Out, words: list[launch.Token], variables: dict[str, str],
                script: str | None = None) -> None:
    """TrainingArguments given as flags to the training script -> ``config.hf_trainer.<flag>``,
    as HfArgumentParser reads them (bare ``--bf16`` is true); ``--deepspeed ds.json`` is
    followed. Nothing unless the flags carry :data:`HINT`, nor when ``script`` is found here
    and builds no Trainer or TrainingArguments: its flags are then its own argparse options (a
    plain ``Accelerator`` loop takes ``--model_name_or_path`` too: newcomer review row 11).
    LLaMA-Factory's ``src/train.py`` (or flags only it takes) is read as LLaMA-Factory's
    (:mod:`.llamafactory_launch`), ``-m axolotl.cli.train`` as axolotl's (:mod:`.axolotl_launch`)."""
    if llamafactory_launch.launched(str(script or ""), words, variables):
        llamafactory_launch.script_args(out, words, variables)
        return
    if axolotl_launch.launched(str(script or "")):
        axolotl_launch.train_args(out, words, variables)
        return
    if script and diffsynth.launched(script, out.path, [w for w, _ in words]):
        diffsynth.script_args(out, words, variables)
        return
    found, _ = launch.flags(words, set(), stop_at_positional=False)
    if not any(HINT.match("--" + f) for f, _, _ in found) or _not_a_trainer(script, out.path):
        return
    out.put_flags(found, KIND, variables, follow={"deepspeed": ".json"})
    out.problems.extend(refuse_empty(out.facts, out.prov, out.path, PREFIX, BOOL_KEYS))
    model = out.facts.get(f"{PREFIX}.model_name_or_path")
    if isinstance(model, str):      # its expert count: the folder's config.json, a known hub id
        hfmoe.read_model(KIND, out.path, {"model_name_or_path": model}, out.facts, out.prov)


_TRAINER = re.compile(r"\b\w*Trainer\b")


def _not_a_trainer(script: str | None, naming: str) -> bool:
    """``script`` is here (inside the job) and its text neither builds a Trainer nor parses
    TrainingArguments (:data:`PY_HINT`); a script not found here proves nothing."""
    if not script or "$" in script:
        return False
    from preflight.reading.launchroot import locate_script
    from preflight.reading.parse import ParseError, read_text

    found = locate_script(script, naming)
    if found is None:
        return False
    try:
        text = read_text(found)
    except (ParseError, OSError):
        return False
    return not (PY_HINT.search(text) or _TRAINER.search(text))


def script_line(out: launch.Out, text: str, variables: dict[str, str]) -> None:
    """The first ``torchrun`` / ``deepspeed`` / ``python`` line carrying :data:`HINT`: the
    launcher's flags come before the training script, TrainingArguments after it."""
    hint = launch.find(HINT, text)
    if hint is None:
        return
    start, end = launch.command_at(text, hint.start())
    words = launch.tokens(text, start, end)
    out.too_long(words)
    script = next((i for i, (t, _) in enumerate(words) if t.endswith(".py")), -1)
    script_args(out, words[script + 1:], variables,
                launch.value(words[script][0], variables) if script >= 0 else None)


# TrainingArguments and the TRL configs that subclass it (frameworks/trl.py).
ARGS_CLASSES = frozenset({"TrainingArguments", "Seq2SeqTrainingArguments"})
WATCH = ("bf16", "fp16", "gradient_checkpointing", "deepspeed", "fsdp", "torch_compile")
"""The TrainingArguments a rule reads: Unknown when a ``**mapping`` the text does not give may
set them."""
PY_HINT = re.compile(r"TrainingArguments|\b(?:%s)\b|HfArgumentParser|TrlParser"
                     % "|".join(sorted(trl.CONFIGS)))


def is_training_args(module: Module, func: str) -> bool:
    """A TrainingArguments class: transformers', a TRL config, or a class of this file built on
    one of them."""
    for name in module.lineage(func):
        root, last = name.split(".", 1)[0], name.rsplit(".", 1)[-1]
        if (root == "transformers" and last in ARGS_CLASSES) or \
                (root == "trl" and last in trl.CONFIGS):
            return True
    return False


def read_python(module: Module) -> ReaderOutput:
    """``TrainingArguments(...)`` (and TRL configs) in a script -> ``config.hf_trainer.*`` at
    their lines; with ``HfArgumentParser`` / ``TrlParser`` the arguments come from the launch
    line instead (its flags, or the YAML / JSON file it passes), which is read with it."""
    out = PyOut(module)
    parsed_args = False
    for call, _ in out.calls():
        if is_training_args(module, call.func):
            out.put(f"config.{KIND}.code.args_class", call.name, call.line)
            out.put_all(f"config.{KIND}", call, WATCH)
            if isinstance(call.kwargs.get("deepspeed"), str) and \
                    str(call.kwargs["deepspeed"]).endswith(".json"):
                out.link(call.kwargs["deepspeed"], "deepspeed",
                         call.lines.get("deepspeed", call.line), "deepspeed=")
        elif call.name in ("HfArgumentParser", "TrlParser") and (args := [
                a for a in _classes(call) if is_training_args(module, getattr(a, "name", ""))]):
            parsed_args = True
            out.put(f"config.{KIND}.code.parser", call.name, call.line)
            out.put(f"config.{KIND}.code.args_class", args[0].name.rsplit(".", 1)[-1],
                    call.line)
    if parsed_args and module.argv:
        _argv(out, module.argv)
    if out.facts:       # an HF Trainer job: the model it loads, its experts (ACC-0097)
        hfmoe.from_pretrained(out, KIND)
    return out.output()


def _classes(call: Any) -> list[Any]:
    """The dataclasses given to an argument parser (one, or a tuple / list of them)."""
    first = call.args[0] if call.args else call.kwargs.get("dataclass_types")
    return first if isinstance(first, list) else [first]


def _argv(out: PyOut, argv: tuple[str, ...]) -> None:
    """The launch line's arguments to a script that parses TrainingArguments from them: a lone
    YAML / JSON file (HfArgumentParser.parse_yaml_file / parse_json_file), ``--config FILE``
    (TrlParser), else ``--flag value`` pairs."""
    files = [a for a in argv if a.lower().endswith((".yaml", ".yml", ".json"))]
    if len(argv) == 1 and files:
        out.link(files[0], KIND, None, "the script's argument")
        return
    if "--config" in argv and argv.index("--config") + 1 < len(argv):
        out.link(argv[argv.index("--config") + 1], KIND, None, "--config")


def _read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    # an `accelerate launch ... train.py --bf16` line holds both kinds: one reader for both
    from preflight.frameworks.accelerate_launch import read

    return read(path, text, outer)



def from_hf_trainer(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    h = View(f, KIND, prov)
    out = training_args(h)
    trl_rollout.apply(h, out)     # a TRL GRPO/RLOO config's rollout (fwrl7, holdout21)
    return out.build()


def training_args(h: View) -> IntentOut:
    """Intent from TrainingArguments-style keys (shared by the tools that build them from their
    own YAML: axolotl, LLaMA-Factory), under ``h``'s kind."""
    out = IntentOut()
    if h.get("fp8") is True:
        # LlamaFactory (Fp8Arguments: fp8, fp8_backend) and axolotl (fp8: true, torchao
        # tensorwise) add their own fp8 key on top of TrainingArguments.
        src = h.src("fp8")
        out["fp8"] = (True, src)
        raw = h.get("fp8_backend")
        backend = {"te": "te", "torchao": "torchao", "ao": "torchao", "msamp": "msamp"}.get(
            str(raw).lower()) if raw is not None else None
        out["backend"] = ((backend, h.src("fp8_backend", src)) if backend else
                          (Unknown(f"fp8_backend {raw or 'auto'!r}: picked at run time from "
                                   "what is installed"), h.src("fp8_backend", src)))
        if backend == "torchao":
            out["recipe"] = ("tensorwise", src)
    elif h.unknown("fp8"):
        unknown = h.unknown("fp8")
        assert unknown is not None
        out["fp8"] = (Unknown(f"fp8 is not known: {unknown.reason}"), h.src("fp8"))
    # TrainingArguments: fp16 is checked first, then bf16 (Trainer's mixed-precision setup).
    for key in ("fp16", "bf16"):
        if h.get(key) is True:
            out["precision"] = (key, h.src(key))
            out.overrides_fp8 = (True, h.src(key))
            break
        unknown = h.unknown(key)
        if unknown is not None:
            # may replace accelerate's FP8 or not: never read as either (issue 22 item 5)
            out["precision"] = (Unknown(f"{key} is not known: {unknown.reason}"), h.src(key))
            out.overrides_fp8 = (Unknown(f"{key} may replace accelerate's mixed precision: "
                                            f"{unknown.reason}"), h.src(key))
            break
    if h.has("gradient_checkpointing"):
        out["activation_checkpointing"] = (h.truthy("gradient_checkpointing"),
                                           h.src("gradient_checkpointing"))
    if h.has("torch_compile"):
        out["compile"] = (h.truthy("torch_compile"), h.src("torch_compile"))
    else:
        # a default: another framework's explicit setting (accelerate's dynamo_backend) wins
        out.default("compile", (False, "TrainingArguments default (torch_compile=False)"))
    if h.get("deepspeed"):
        out["distributed"] = ("deepspeed", h.src("deepspeed"))
        out.runs_on = ("deepspeed",)
    elif h.get("fsdp"):
        v2 = h.int("fsdp_config.fsdp_version") == 2 or h.int("fsdp_config.version") == 2
        out["distributed"] = ("fsdp2" if v2 else "fsdp1", h.src("fsdp"))
    mb_key = "per_device_train_batch_size" if h.has("per_device_train_batch_size") \
        else "micro_batch_size"
    mb = h.int(mb_key)
    for seq_key in ("max_seq_length", "max_length", "max_seq_len", "block_size", "sequence_len",
                    "cutoff_len"):
        seq = h.int(seq_key)
        if seq:
            out["seq_len"] = (seq, h.src(seq_key))
        if mb and seq:
            out["shapes.tokens"] = (mb * seq, h.src(seq_key))
            break
    _packing(h, out, mb, mb_key)
    _moe(h, out)
    return out


def _moe(h: View, out: IntentOut) -> None:
    """MoE experts and top-k from the model folder's config.json (:mod:`.hfmoe`); a dense model
    (no expert key, or 0 / 1 experts) states nothing."""
    experts = h.unknown(hfmoe.EXPERTS) or h.int(hfmoe.EXPERTS)
    if isinstance(experts, Unknown) or (experts is not None and experts > 1):
        out["moe.experts"] = (experts, h.src(hfmoe.EXPERTS))
        top = h.unknown(hfmoe.TOP_K) or h.int(hfmoe.TOP_K)
        if top is not None:
            out["moe.top_k"] = (top, h.src(hfmoe.TOP_K))


# Keys that pack samples: TRL SFTConfig packing / padding_free, axolotl sample_packing /
# batch_flattening, LLaMA-Factory packing / neat_packing (issue 23: dynamic token counts).
_PACKING_KEYS = ("packing", "padding_free", "sample_packing", "batch_flattening", "neat_packing")


def _packing(h: View, out: IntentOut, mb: int | None, mb_key: str) -> None:
    """The shared dynamic-shape facts: micro-batch, packing, pad multiple (``pad_to_multiple_of``
    of TRL's SFTConfig / DataCollator and axolotl)."""
    if mb:
        out["micro_batch"] = (mb, h.src(mb_key))
    stated = [k for k in _PACKING_KEYS if h.has(k)]
    on = next((k for k in stated if h.truthy(k)), None)
    if on is not None:
        out["packing"] = (True, h.src(on))
    elif stated:
        out["packing"] = (False, h.src(stated[0]))
    pad = h.int("pad_to_multiple_of")
    if pad:
        out["pad_multiple"] = (pad, h.src("pad_to_multiple_of"))



FRAMEWORK = Framework(
    kind=KIND, title="Hugging Face Trainer (TrainingArguments)", formats=("yaml", "json", "text"),
    score=score, read=read_hf_trainer, derive=from_hf_trainer, precedence=0,
    cancels_fp8_of=("accelerate",), explicit_precision_wins=True, zero_stage_rank=3,
    derive_also=(("accelerate", "env.ACCELERATE_MIXED_PRECISION"),),
    runs_on=("accelerate",), distributions=("transformers",), rule_area="HF",
    area_title="HF Trainer", launch=Launch(_read_text, flags=HINT, entry=PY_HINT,
                                           trains=(("--output_dir",),
                                                   ("--per_device_train_batch_size",))),
    # TrainingArguments bool fields: HfArgumentParser gives them string_to_bool (`--bf16 1`)
    bool_keys=BOOL_KEYS,
    # a YAML/JSON string: parse_yaml_file / parse_json_file -> parse_dict keep it and the
    # Trainer tests its truth, TRL's --config makes it an argparse default (string_to_bool)
    file_strings="either", python_strings="truth",
    file_strings_by_parser=(("TrlParser", "words"), ("HfArgumentParser", "truth")),
    file_strings_why=(
        "HfArgumentParser.parse_yaml_file / parse_dict pass it to TrainingArguments unchanged, "
        "whose truth turns it on (transformers src/transformers/hf_argparser.py parse_dict @ "
        "002496228f0c), while TRL's --config sets it as an argparse default, which "
        "string_to_bool converts (trl/scripts/utils.py l.321-338, 359-372 @ v1.9.0)"),
    read_python=read_python, python_hint=PY_HINT,
    shape_keys=(("seq", ("max_seq_length", "cutoff_len", "sequence_len")),
                ("micro_batch", ("per_device_train_batch_size", "micro_batch_size")),
                ("model", ("model_name_or_path", "base_model"))),
    defaults=(
        Default("fp16 / bf16", "fp32 (then accelerate's mixed precision or "
                "ACCELERATE_MIXED_PRECISION)", "all", "transformers/training_args.py"),
        Default("torch_compile", "False", "all", "transformers/training_args.py"),
    ),
    references=(
        Reference("deepspeed", "deepspeed",
                  "opened relative to the launch directory (TrainingArguments.deepspeed)"),
    ),
)
