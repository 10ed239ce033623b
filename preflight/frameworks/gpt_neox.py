"""GPT-NeoX (EleutherAI) YAML configs and ``deepy.py`` launch lines.

How GPT-NeoX reads a job (read at EleutherAI/gpt-neox ea7aefd8, main of 2026-05, and at
fb218fa7, its ``filtering_training`` branch): ``python deepy.py train.py [-d DIR] a.yml b.yml``
(megatron/neox_arguments/arguments.py ``consume_deepy_args`` L298-L440: the first positional
word is the script, every later one a config file, ``.yml`` appended to a name without
``.yml`` / ``.json``, ``--conf_dir`` / ``-d`` prefixed to each). ``NeoXArgs.from_ymls``
(L224-L290) loads each with PyYAML's FullLoader, refuses a key that an earlier file set
("duplicate keys with previously loaded file") and turns ``-`` into ``_`` in every top-level
key (``pipe-parallel-size`` is ``pipe_parallel_size``): so the facts here are
``config.gpt_neox.<key with underscores>``.

FP8: GPT-NeoX's Transformer Engine integration (PR 1282, 8900d05c, 2024-12-19) runs FP8 only
through ``te_fp8_mha``: ParallelTransformerLayer.forward enters ``TEDelayedScaling(...)`` for
the whole layer when it is true, a ``nullcontext`` otherwise (megatron/model/transformer.py
L1050-L1062 at ea7aefd8). ``te_fp8_format``, ``te_fp8_wgrad``, ``te_fp8_amax_*`` and
``te_fp8_margin`` are only that recipe's fields (transformer_engine.py L633-L660): set without
``te_fp8_mha`` they are inert, and ``te_mha`` / ``te_layernorm_mlp`` / ``te_columnparallel``
build TE layers that run in the configured 16-bit precision.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._claim import owns
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.reading import launch
from preflight.reading.parse import Parsed, flatten
from preflight.reading.types import ConfigProblem, ReaderOutput

KIND = "gpt_neox"
PREFIX = f"config.{KIND}"
_REPO = "https://github.com/EleutherAI/gpt-neox/blob/ea7aefd8"

OWN_KEYS = frozenset({
    "pipe_parallel_size", "model_parallel_size", "attention_config", "gpt_j_residual",
    "gpt_j_tied", "pos_emb", "rotary_pct", "no_weight_tying", "output_layer_parallelism",
    "scaled_upper_triang_masked_softmax_fusion", "te_mha", "te_fp8_mha", "te_layernorm_mlp",
    "te_columnparallel", "te_rowparallel", "te_fp8_format", "te_fp8_wgrad",
    "te_fp8_amax_history_len", "te_fp8_amax_compute_algo", "te_fp8_margin", "wandb_host",
    "checkpoint_validation_with_forward_pass",
})
"""NeoXArgs fields (megatron/neox_arguments/neox_args.py at ea7aefd8) no other trainer writes
as top-level YAML keys (Megatron-LM takes most of them as ``--flags``, not YAML)."""

def _keys(data: Mapping[Any, Any]) -> set[str]:
    return {str(k).replace("-", "_") for k in list(data)[:4096]}


def score(data: Any) -> int:
    """Its own NeoXArgs names (``-`` or ``_``); a DeepSpeed block only adds weight."""
    top = _keys(data)
    own = top & OWN_KEYS
    if not owns(top, OWN_KEYS):
        return 0
    return 8 + 3 * len(own) + len(top & {"zero_optimization", "train_micro_batch_size_per_gpu",
                                         "num_layers", "hidden_size", "seq_length"})


def read(path: str, parsed: Parsed) -> ReaderOutput:
    """Every key as ``config.gpt_neox.<key>``, ``-`` in top-level keys read as ``_``."""
    data = parsed.data if isinstance(parsed.data, dict) else {}
    facts, prov = flatten(data, parsed, PREFIX, path)
    renamed: dict[str, Any] = {}
    renamed_prov: dict[str, Any] = {}
    for name, value in facts.items():
        head, _, rest = name[len(PREFIX) + 1:].partition(".")
        new = f"{PREFIX}.{head.replace('-', '_')}" + (f".{rest}" if rest else "")
        renamed[new], renamed_prov[new] = value, prov[name]
    # from_ymls checks each key as written against the keys already read with `-` as `_`
    # (arguments.py L262-L270 at ea7aefd8): `te-fp8-mha: false` then `te_fp8_mha: true` in one
    # file raises ValueError before training; the later one winning was FP8 "yes" (redteam12)
    seen: set[str] = set()
    for key in list(data)[:4096]:
        if str(key) in seen:
            head = str(key).replace("-", "_")
            for name in [n for n in renamed if n == f"{PREFIX}.{head}" or
                         n.startswith(f"{PREFIX}.{head}.")]:
                del renamed[name]
            renamed[f"{PREFIX}.{head}"] = Unknown(
                f"{os.path.basename(path)} sets {head} twice ({key!s:.60} after its `-`/`_` "
                "spelling): GPT-NeoX's from_ymls refuses the file (ValueError, duplicate keys)")
            renamed_prov[f"{PREFIX}.{head}"] = prov.get(f"{PREFIX}.{key}", path)
        seen.add(str(key).replace("-", "_"))
    top = list(data)[:4096]
    bad = next((k for k in top if not isinstance(k, str)), None)
    if bad is not None:
        # from_ymls calls conf_key.replace("-", "_") on every top-level key (arguments.py
        # L224-L290 at ea7aefd8): `1: 2` stops it with AttributeError before training
        renamed[f"{PREFIX}.{LOAD}"] = Unknown(
            f"{os.path.basename(path)} has the top-level key {str(bad)[:40]!r}, not a string: "
            "GPT-NeoX's from_ymls stops on it (AttributeError in conf_key.replace)")
        renamed_prov[f"{PREFIX}.{LOAD}"] = path
    # each file's keys as written: from_ymls refuses a key an earlier file set (checked in
    # from_gpt_neox, where every file of the job is seen; the facts merge keeps the first)
    digest = hashlib.sha1(os.path.realpath(path).encode(errors="replace")).hexdigest()[:12]
    renamed[f"{PREFIX}.{FILE_KEYS}.{digest}"] = [os.path.basename(path)] + [
        str(k) for k in top if isinstance(k, str)]
    renamed_prov[f"{PREFIX}.{FILE_KEYS}.{digest}"] = path
    problems = () if bad is None else (ConfigProblem(
        path, None, str(renamed[f"{PREFIX}.{LOAD}"].reason), level="warning",
        fix="Quote the key or remove it: GPT-NeoX reads only string keys"),)
    return ReaderOutput(renamed, renamed_prov, problems)


LOAD = "load_refused"
FILE_KEYS = "file_keys"


def _refused(f: Mapping[str, Any]) -> Unknown | None:
    """Why GPT-NeoX's from_ymls would not load these files: a key two files set (ValueError
    "duplicate keys with previously loaded file", arguments.py L224-L290 at ea7aefd8; the
    order of the files is the launch line's, so any shared key is read as refused or as
    a value fp8-doctor cannot place), or a key that is not a string (AttributeError)."""
    load = f.get(f"{PREFIX}.{LOAD}")
    if isinstance(load, Unknown):
        return load
    owner: dict[str, tuple[str, str]] = {}
    head = f"{PREFIX}.{FILE_KEYS}."
    for name in sorted(n for n in f if n.startswith(head))[:_MAX_CONFS]:
        value = f[name]
        if not isinstance(value, list) or not value:
            continue
        for key in value[1:]:
            norm = str(key).replace("-", "_")
            if norm in owner and owner[norm][0] != name:
                return Unknown(f"{norm[:60]} is set in {owner[norm][1][:60]} and in "
                               f"{str(value[0])[:60]}: GPT-NeoX's from_ymls refuses a key an "
                               "earlier config file set (ValueError, duplicate keys)")
            owner.setdefault(norm, (name, str(value[0])))
    return None


def _bool(m: View, key: str, default: bool, why: str) -> tuple[Any, str]:
    """A NeoXArgs bool field: its value, or Unknown for one that is not a YAML boolean
    (NeoXArgs' type check refuses the string ``"true"``: arguments.py ``validate_types``)."""
    unknown = m.unknown(key)
    if unknown is not None:
        return unknown, m.src(key)
    if not m.has(key) and m.any_prefix(key):
        return Unknown(f"{key} is a mapping, not a boolean: GPT-NeoX's type check refuses "
                       "it"), m.src(key)
    if not m.has(key):
        config = m.unknown("base_config")
        # a config file named by a value known only at run time may set it (NeoX refuses a
        # key that two files set, so one the files read here state is theirs alone)
        return (config, m.src("base_config")) if config is not None else (default, why)
    value = m.get(key)
    if isinstance(value, bool):
        return value, m.src(key)
    return Unknown(f"{key} is {str(value)[:40]!r}, not a boolean: GPT-NeoX's type check "
                   "refuses it"), m.src(key)


_PRECISION = {"fp16": "fp16", "bfloat16": "bf16", "fp32": "fp32"}


def _precision(m: View) -> tuple[Any, str]:
    """``precision``, else the DeepSpeed ``fp16`` / ``bf16`` blocks' ``enabled``, else fp32
    (NeoXArgs.calculate_derived, arguments.py L966-L1011 at ea7aefd8)."""
    if m.has("precision") or m.unknown("precision") is not None:
        value = m.get("precision")
        got = _PRECISION.get(value) if isinstance(value, str) else None
        return (got if got else Unknown(f"precision {str(value)[:40]!r} is not one of "
                                        "fp16 | bfloat16 | fp32")), m.src("precision")
    for key, name in (("fp16.enabled", "fp16"), ("bf16.enabled", "bf16")):
        if m.get(key) is True:
            return name, m.src(key)
    return "fp32", "GPT-NeoX default (no precision, fp16 or bf16 block: fp32)"


def from_gpt_neox(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    m = View(f, KIND, prov)
    out = IntentOut()
    fp8, src = _bool(m, "te_fp8_mha", False,
                     "GPT-NeoX default (te_fp8_mha false: no FP8; the te_fp8_* settings act "
                     "only through it)")
    refused = _refused(f)
    if refused is not None:
        fp8, src = refused, m.src("te_fp8_mha", "GPT-NeoX config files")
    out["fp8"] = (fp8, src)
    if fp8 is not False:
        out["backend"] = ("te", src)
        out["recipe"] = ("delayed", src)   # TEDelayedScaling(te.common.recipe.DelayedScaling)
        fmt = m.get("te_fp8_format", "hybrid")
        out["format"] = (fmt if fmt in ("hybrid", "e4m3") else Unknown(
            f"te_fp8_format {str(fmt)[:40]!r} is not e4m3 or hybrid"),
            m.src("te_fp8_format", "GPT-NeoX default (hybrid)"))
        out["fp8_attention"] = (fp8, src)   # DelayedScaling(fp8_mha=te_fp8_mha)
    out["precision"] = _precision(m)
    out["distributed"] = ("deepspeed", "GPT-NeoX trains on DeepSpeed")
    stage = m.int("zero_optimization.stage")
    if stage is not None:
        out["zero_stage"] = (stage, m.src("zero_optimization.stage"))
    tp = m.int("model_parallel_size")
    out["tp"] = (tp if tp is not None else 1, m.src("model_parallel_size",
                                                    "GPT-NeoX default (1)"))
    out["sequence_parallel"] = _bool(m, "sequence_parallel", False, "GPT-NeoX default (false)")
    out["activation_checkpointing"] = _bool(m, "checkpoint_activations", False,
                                            "GPT-NeoX default (false)")
    for key, name in (("seq_length", "seq_len"), ("train_micro_batch_size_per_gpu",
                                                  "micro_batch")):
        got = m.int(key)
        if got is not None:
            out[name] = (got, m.src(key))   # type: ignore[index]
    hidden = m.int("hidden_size")
    if hidden:
        out["shapes.hidden"] = (hidden, m.src("hidden_size"))
    return out.build()


# `python deepy.py train.py [options] CONF...` (arguments.py consume_deepy_args)
COMMAND = re.compile(r"(?<![\w.-])deepy\.py[ \t]+(?:[^\s;&|]*/)?train\.py(?![\w.])")
OTHER = re.compile(r"(?<![\w.-])deepy\.py[ \t]+(?:[^\s;&|]*/)?(?:eval|generate)\.py(?![\w.])")
TRAINS = (("deepy.py",),)
_VALUE_FLAGS = frozenset({"-d", "--conf_dir", "-H", "--hostfile", "--wandb_group",
                          "--wandb_run_name", "--wandb_team", "--iteration",
                          "--eval_results_prefix", "-i", "--sample_input_file", "-o",
                          "--sample_output_file", "--autotuning"})
_MAX_CONFS = 32


def _train_args(out: launch.Out, words: list[launch.Token], variables: dict[str, str]) -> None:
    """The config files after ``deepy.py train.py``, each linked as a GPT-NeoX config, with
    ``--conf_dir`` / ``-d`` before each and ``.yml`` after a bare name."""
    conf_dir: Any = None
    confs: list[tuple[str, int]] = []
    i = 0
    while i < len(words) and len(confs) < _MAX_CONFS:
        word, pos = words[i]
        flag, eq, inline = word.partition("=")
        if flag in _VALUE_FLAGS:
            raw = inline if eq else (words[i + 1][0] if i + 1 < len(words) else None)
            if flag in ("-d", "--conf_dir") and raw is not None:
                conf_dir = launch.value(raw, variables)
            i += 1 if eq else 2
            continue
        if word.startswith("-"):
            i += 1     # --eval_tasks takes several words; they are no config
            continue
        confs.append((word, pos))
        i += 1
    for word, pos in confs:
        target = launch.value(word, variables)
        if isinstance(target, str) and not target.endswith((".yml", ".json", ".yaml")):
            target += ".yml"    # consume_deepy_args L418-L421
        if isinstance(conf_dir, str) and isinstance(target, str):
            target = os.path.join(conf_dir, target)
        elif conf_dir is not None and not isinstance(conf_dir, str):
            target = conf_dir   # a folder known only at run time: not linked (Out.link)
        out.link(target, KIND, pos, "deepy.py train.py CONFIG", own=True)


def read_text(path: str, text: str, outer: dict[str, str] | None = None) -> ReaderOutput:
    """A script running ``deepy.py train.py``: its config files, linked."""
    return launch.read_tool_script(path, text, outer, train=COMMAND, other=OTHER, kind=KIND,
                                   key="deepy.py", train_args=_train_args,
                                   config_ends=(".yml", ".yaml", ".json"), skip_flags=True)


FRAMEWORK = Framework(
    kind=KIND, title="GPT-NeoX", formats=("yaml", "json"), score=score, read=read,
    derive=from_gpt_neox, precedence=33, rule_area="NEOX", area_title="GPT-NeoX",
    launch=Launch(read_text, command=COMMAND, trains=TRAINS),
    # run from its source checkout (no distribution on PyPI): deepy.py, train.py, megatron/
    from_source=True, requires=("deepspeed",),
    shape_keys=(("heads", ("num_attention_heads",)), ("layers", ("num_layers",)),
                ("seq", ("seq_length",)), ("micro_batch", ("train_micro_batch_size_per_gpu",)),
                ("tp", ("model_parallel_size",))),
    defaults=(
        Default("te_fp8_mha", "false (no FP8)", "all",
                f"{_REPO}/megatron/neox_arguments/neox_args.py#L581"),
        Default("te_fp8_format", "hybrid", "all",
                f"{_REPO}/megatron/neox_arguments/neox_args.py#L552"),
        Default("precision", "fp32 unless an fp16 / bf16 block is enabled", "all",
                f"{_REPO}/megatron/neox_arguments/arguments.py#L966-L1011"),
    ),
)
"""Source of the line numbers: EleutherAI/gpt-neox ea7aefd8 (see the module docstring)."""

