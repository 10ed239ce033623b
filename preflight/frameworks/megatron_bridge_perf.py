"""Megatron-Bridge's performance launcher: ``python scripts/performance/setup_experiment.py -m
deepseek -mr deepseek_v3 -g gb300 -c fp8_mx ...`` (and ``run_script.py`` / ``bootstrap.py``, the
scripts it starts on the nodes with the same words), read from the launch line only; the scripts
themselves are never imported.

Two interfaces, read at their tags of NVIDIA-NeMo/Megatron-Bridge; a value some release takes is
read with that release's meaning (no value is taken by both with different meanings: ``bf16`` is
BF16 in both), and only a value no release takes is an error:

- v0.2.0-v0.6.0 (v0.2.0 7af9601c, v0.4.0 0fbfe7d3, v0.6.0 51885cf1; 26.04-alpha.rc1/rc2 alike):
  ``scripts/performance/argument_parser.py`` (l.135-141 @ v0.2.0, l.694-702 @ v0.6.0)
  ``-c/--compute_dtype`` with ``choices=["bf16", "fp8_cs", "fp8_mx", "fp8_sc", "nvfp4"]``, default
  ``bf16``; ``utils/helpers.py`` (v0.2.0-v0.2.2) / ``utils/precision.py`` (v0.3.0-)
  ``get_precision_config`` and ``perf_recipes/_common.py`` ``_perf_precision`` (v0.6.0 l.97-118):
  ``fp8_cs`` current scaling with ``first_last_layers_bf16 = False``, ``fp8_mx`` MXFP8, ``fp8_sc``
  subchannel (blockwise), ``nvfp4`` NVFP4, ``bf16`` none. No ``--fp8_recipe`` option.
- v0.1.0rc3-v0.2.0rc6 (v0.1.0rc3 bf71eba0, v0.1.0rc4 6725f704, v0.2.0rc6 76235469; the NeMo 25.09
  container's Megatron-Bridge 0.1): ``argument_parser.py`` l.86-107 @ v0.1.0rc4
  ``-c/--compute_dtype`` ``choices=["bf16", "fp8"]`` default ``bf16`` and ``-fr/--fp8_recipe``
  ``choices=["ds", "cs", "mx", "ss"]`` default ``ds``; ``utils/helpers.py`` l.92-111
  ``get_precision_config(compute_dtype, fp8_recipe)``: ``ds`` delayed scaling, ``cs`` current
  scaling with ``first_last_layers_bf16 = False``, ``mx`` MXFP8, ``ss`` subchannel; ``--fp8_recipe``
  is not read under ``bf16``. ``parse_known_args`` (l.235 @ v0.1.0rc4) as later.
- ``setup_experiment.py`` forwards its words (less the launcher-only ones,
  ``_filter_run_script_args`` @ v0.6.0 l.74-118) to the rank-local script, which applies the
  words its parser does not know as Hydra overrides after the recipe (``run_script.py``
  ``parse_known_args`` -> ``set_cli_overrides``, v0.6.0 l.182, l.76): ``mixed_precision.fp8_recipe=X``
  on the launch line wins over ``-c``.
- A job's own copy (``scripts/performance/custom_setup_experiment.py``, AI-Hypercomputer
  gpu-recipes a4 @ 1f338bb4) is the launcher only where the job holds it beside the launch script
  and it parses with the checkout's ``argument_parser`` (:func:`copy_check`); else ``-c`` is
  Unknown: a copy may do anything with its words.
- ``--use_recipes`` runs the library recipe (``run_recipe.py``) instead of the flat performance
  recipe: ``-c`` is not read on that path here (Unknown).

The settings are stated as Megatron-Bridge's own (``config.megatron_bridge.mixed_precision`` = the
preset name, its fields, the parallel sizes ``-tp``/``-pp``/``-ep`` ... under their ConfigContainer
names), so its derive and rules judge them; ``config.megatron_bridge.perf.*`` keeps the launcher's
own words (model, recipe, GPU, task).
"""

from __future__ import annotations

import os
import re
from typing import Any

from preflight.base.digits import argparse_int
from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading.overridelaunch import LaunchRead, Syntax
from preflight.reading.parse import ParseError, read_text
from preflight.reading.types import ConfigProblem

ENTRY = re.compile(r"(?:^|/)scripts/performance/(?:\w+_)?(?:setup_experiment|run_script|bootstrap)"
                   r"\.py$")
HINT = re.compile(r"scripts/performance/(?:\w+_)?(?:setup_experiment|run_script|bootstrap)\.py")
UPSTREAM = frozenset({"setup_experiment.py", "run_script.py", "bootstrap.py"})
"""The launcher's own names; another (``custom_setup_experiment.py``, holdout23 gpu-recipes-a4:
``cp $CUSTOM_SETUP_EXPERIMENT_SCRIPT_PATH scripts/performance/``) is a job's own copy, read as
the launcher only where the job holds it and it parses with Megatron-Bridge's argument_parser
(:func:`copy_check`)."""
ENTRY_CODE = re.compile(r"\bmodel_recipe_name\b")
"""What the launcher's text holds (its ``-mr/--model_recipe_name`` option, passed on to every
helper, at v0.4.0-v0.6.0; NeMo 2's performance scripts have no such option)."""
SOURCE = ("Megatron-Bridge v0.2.0-v0.6.0 scripts/performance/argument_parser.py -c/--compute_dtype"
          " (v0.1.0rc3-v0.2.0rc6: -c bf16|fp8 with -fr/--fp8_recipe), utils/precision.py"
          " get_precision_config")
NEW, OLD = "v0.2.0-v0.6.0", "v0.1.0rc3-v0.2.0rc6"
"""The releases of each interface (tags listed in the module docstring)."""
CHOICES: dict[str, tuple[str, dict[str, Any]]] = {
    "bf16": ("bf16_mixed", {}),
    "fp8_cs": ("bf16_with_fp8_current_scaling_mixed", {"first_last_layers_bf16": False}),
    "fp8_mx": ("bf16_with_mxfp8_mixed", {}),
    "fp8_sc": ("bf16_with_fp8_subchannel_scaling_mixed", {}),
    "nvfp4": ("bf16_with_nvfp4_mixed", {}),
}
"""``-c`` value -> (Megatron-Bridge preset, fields the perf scripts set on it), v0.2.0-v0.6.0."""
OLD_RECIPES: dict[str, tuple[str, dict[str, Any]]] = {
    "ds": ("bf16_with_fp8_delayed_scaling_mixed", {}),
    "cs": ("bf16_with_fp8_current_scaling_mixed", {"first_last_layers_bf16": False}),
    "mx": ("bf16_with_mxfp8_mixed", {}),
    "ss": ("bf16_with_fp8_subchannel_scaling_mixed", {}),
}
"""``-c fp8 -fr X`` -> preset, v0.1.0rc3-v0.2.0rc6 (utils/helpers.py l.92-111 @ v0.1.0rc4)."""
OLD_DEFAULT_RECIPE = "ds"
_OLD_LONGS = ("fp8_recipe",)
"""v0.1.0rc3-v0.2.0rc6's long options starting with ``f``: any prefix of ``--fp8_recipe`` is it."""
DEFAULT = "bf16"
# the launcher's options and the ConfigContainer field each sets (utils/overrides.py
# set_user_overrides @ v0.6.0); long and short spellings
SIZES = {
    "tp": "model.tensor_model_parallel_size",
    "tensor_model_parallel_size": "model.tensor_model_parallel_size",
    "pp": "model.pipeline_model_parallel_size",
    "pipeline_model_parallel_size": "model.pipeline_model_parallel_size",
    "cp": "model.context_parallel_size", "context_parallel_size": "model.context_parallel_size",
    "vp": "model.virtual_pipeline_model_parallel_size",
    "virtual_pipeline_model_parallel_size": "model.virtual_pipeline_model_parallel_size",
    "ep": "model.expert_model_parallel_size",
    "expert_model_parallel_size": "model.expert_model_parallel_size",
    "et": "model.expert_tensor_parallel_size",
    "expert_tensor_parallel_size": "model.expert_tensor_parallel_size",
    "mb": "train.micro_batch_size", "micro_batch_size": "train.micro_batch_size",
    "gb": "train.global_batch_size", "global_batch_size": "train.global_batch_size",
    "sl": "dataset.seq_length", "seq_length": "dataset.seq_length",
}
WORDS = {"m": "model_family_name", "model_family_name": "model_family_name",
         "mr": "model_recipe_name", "model_recipe_name": "model_recipe_name",
         "g": "gpu", "gpu": "gpu", "task": "task", "ng": "num_gpus", "num_gpus": "num_gpus",
         "config_variant": "config_variant", "domain": "domain",
         # set on the model (scripts/performance/utils/overrides.py l.119-140 @ v0.6.0):
         # config.megatron.* through frameworks/mcore_graphs.py
         "cuda_graph_impl": "cuda_graph_impl", "cuda_graph_scope": "cuda_graph_scope"}
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)), value_flags=frozenset({
    "c", "compute_dtype", "fr", "fp8_recipe", "s", "model_size", "model_name", "config_file",
    "use_tokendrop", *SIZES, *WORDS, "a", "account", "p", "partition", "t", "time_limit",
    "i", "container_image", "hf", "hf_token", "log_dir", "gpus_per_node", "gn",
    "nemo_home", "nh", "cm", "custom_mounts", "ce", "custom_env_vars", "cs", "custom_srun_args",
    "wandb_key", "wandb_project_name", "wandb_experiment_name", "wandb_entity_name",
    "pretrained_checkpoint", "save_dir", "load_dir", "data", "tokenizer_model"}))


def facts(read: LaunchRead, prefix: str, line: int) -> tuple[
        dict[str, Any], dict[str, str], list[ConfigProblem]]:
    """What the launcher's words set, as ``<prefix>.*`` facts (the Hydra ``key=value`` words
    are the caller's, read as for ``run_recipe.py``)."""
    out: dict[str, Any] = {}
    prov: dict[str, str] = {}
    problems: list[ConfigProblem] = []
    assert read.launch is not None
    at = Source(read.path, line)
    entry = read.launch.entry.text
    out[f"{prefix}.entry"] = entry
    prov[f"{prefix}.entry"] = at
    for flag, word in WORDS.items():
        if (got := read.flag(flag)) is not None:
            given_ = _int(got[0]) if word == "num_gpus" else got[0]
            out[f"{prefix}.perf.{word}"], prov[f"{prefix}.perf.{word}"] = given_, got[1]
    for flag, key in SIZES.items():
        if (got := read.flag(flag)) is not None:       # argparse type=int
            out[f"{prefix}.{key}"], prov[f"{prefix}.{key}"] = _int(got[0]), got[1]
    given, recipes = read.flag("c", "compute_dtype"), read.flag("use_recipes")
    # the launch's own words as argparse takes them, unless several launches differ (Unknown)
    if given is None or not isinstance(given[0], Unknown):
        given = _argparse(read, "c", "compute_dtype", at) or given
    if recipes is None or not isinstance(recipes[0], Unknown):
        recipes = _argparse(read, None, "use_recipes", at) or recipes
    value, src = given if given is not None else (DEFAULT, at)
    out[f"{prefix}.perf.compute_dtype"], prov[f"{prefix}.perf.compute_dtype"] = value, src
    name: Any
    fields: dict[str, Any] = {}
    if recipes is not None and recipes[0] is not False:
        name = Unknown("--use_recipes runs the library recipe (scripts/performance/run_recipe.py)"
                       ", whose precision is not read here; -c is not what decides it there")
        src = recipes[1]
    elif isinstance(value, Unknown):
        name = Unknown(f"-c/--compute_dtype is not known before the job runs: {value.reason}")
    elif (why := copy_check(read.path, entry)) is not None:
        name = Unknown(why)
    elif isinstance(value, str) and value in CHOICES:
        name, fields = CHOICES[value]
        out[f"{prefix}.perf.releases"] = OLD + ", " + NEW if value == DEFAULT else NEW
    elif value == "fp8":
        name, fields, src = _old_recipe(read, at, src, problems)
        out[f"{prefix}.perf.releases"] = OLD
    else:
        shown = str(value)[:40]
        name = Unknown(f"-c {shown!r} is a choice of no release (v0.1.0rc3-v0.2.0rc6: bf16, fp8; "
                       f"v0.2.0-v0.6.0: {', '.join(CHOICES)}): the performance launcher's "
                       "argparse refuses it (exit 2) and nothing trains")
        problems.append(ConfigProblem(read.path, src.line, (
            f"-c/--compute_dtype {shown!r} is a choice of no Megatron-Bridge performance launcher "
            f"({OLD}: bf16, fp8 with --fp8_recipe ds|cs|mx|ss; {NEW}: {', '.join(CHOICES)}); "
            "argparse stops the job before it starts"),
            fix=f"use one of {', '.join(CHOICES)} (fp8_cs: FP8 current scaling, fp8_mx: MXFP8, "
                "fp8_sc: FP8 blockwise), or on v0.1.x fp8 with --fp8_recipe"))
    out[f"{prefix}.mixed_precision"], prov[f"{prefix}.mixed_precision"] = name, src
    for key, field in fields.items():
        out[f"{prefix}.mixed_precision.{key}"] = field
        prov[f"{prefix}.mixed_precision.{key}"] = src
    return out, prov, problems


_MAX_COPY = 1 << 20
_PARSER = re.compile(r"^\s*from\s+\.?argument_parser\s+import\s+[^\n]*\bparse_cli_args\b", re.M)


def copy_check(path: str, entry: str) -> str | None:
    """Why a job's own copy of the launcher (a name other than :data:`UPSTREAM`) is not read as
    Megatron-Bridge's (None: it is, or the entry is upstream's). The copy is looked for by its
    name in the launch script's folder (where the job keeps the file it copies into the
    checkout); it is the launcher when its text holds ``model_recipe_name`` (:data:`ENTRY_CODE`)
    and imports ``parse_cli_args`` from the checkout's ``argument_parser`` (so ``-c`` takes that
    release's choices). It is read as text, never imported."""
    name = os.path.basename(entry)
    if name in UPSTREAM:
        return None
    copy = os.path.join(os.path.dirname(os.path.abspath(path)), name)
    try:
        if os.path.islink(copy) or os.path.getsize(copy) > _MAX_COPY:
            return f"{name} in the job is a link or too large: the job's own launcher is not read"
        text = read_text(copy)
    except (OSError, ParseError):
        return (f"scripts/performance/{name} is the job's own launcher (not Megatron-Bridge's) "
                "and is not in the job beside the launch script: what its -c does is not known")
    if not ENTRY_CODE.search(text) or not _PARSER.search(text):
        return (f"{name} (the job's own launcher) does not parse its words with Megatron-Bridge's "
                "argument_parser (no model_recipe_name / parse_cli_args): -c is not read")
    return None


def _old_recipe(read: LaunchRead, at: Source, src: Source, problems: list[ConfigProblem],
                ) -> tuple[Any, dict[str, Any], Source]:
    """``-c fp8`` is v0.1.0rc3-v0.2.0rc6's: the preset its ``-fr/--fp8_recipe`` picks (default
    ``ds``, delayed scaling). holdout23 gpu-recipes-a4 llama31-70b: ``--compute_dtype fp8
    --fp8_recipe cs`` was reported as refused (an error on a run the NeMo 25.09 image takes)."""
    got = _argparse(read, "fr", "fp8_recipe", at, _OLD_LONGS, frozenset({"fr"}))
    if got is None:
        return (*OLD_RECIPES[OLD_DEFAULT_RECIPE], src)
    value, where = got
    if isinstance(value, Unknown):
        return Unknown(f"-c fp8 ({OLD}) takes its recipe from --fp8_recipe, not known before the "
                       f"job runs: {value.reason}"), {}, where
    if isinstance(value, str) and value in OLD_RECIPES:
        return (*OLD_RECIPES[value], where)
    shown = str(value)[:40]
    problems.append(ConfigProblem(read.path, where.line, (
        f"--fp8_recipe {shown!r} is not one of {', '.join(OLD_RECIPES)} ({OLD}, the releases "
        "that take -c fp8); argparse stops the job before it starts"),
        fix="ds: delayed scaling, cs: current scaling, mx: MXFP8, ss: subchannel (blockwise)"))
    return Unknown(f"--fp8_recipe {shown!r} is a choice of no release ({OLD}: "
                   f"{', '.join(OLD_RECIPES)}): argparse refuses it (exit 2)"), {}, where


def _int(value: Any) -> Any:
    """An option argparse reads with ``type=int`` (:func:`.digits.argparse_int`, as
    megatron_bridge_train reads its launcher's): a number, another word Unknown."""
    if isinstance(value, str):
        number = argparse_int(value)
        if number is not None:
            return number
        return Unknown(f"{value[:40]!r} is no integer: argparse refuses it (exit 2)")
    return value


_LONGS = ("compute_dtype", "config_variant", "container_image", "context_parallel_size",
          "correlation_threshold", "csp", "cuda_graph_impl", "cuda_graph_scope",
          "custom_bash_cmds", "custom_env_vars", "custom_mounts", "custom_srun_args",
          "use_megatron_fsdp", "use_recipes", "use_tokendrop")
"""The long options of argument_parser.py @ v0.6.0 (51885cf1; v0.4.0 and v0.5.0 alike but
``--csp``) that share a first letter with the two read here: an abbreviation argparse takes
must be unique among them, and one that is not stops it (``--co``: "ambiguous option")."""
_SHORTS = frozenset({"c", "cp", "cm", "ce", "cs"})


def _argparse(read: LaunchRead, short: str | None, long: str, at: Source,
              longs: tuple[str, ...] = _LONGS, shorts: frozenset[str] = _SHORTS,
              ) -> tuple[Any, Source] | None:
    """The last value argparse gives ``-short`` / ``--long`` on the launch line (the launcher's
    parser has ``allow_abbrev`` on: ``--comp fp8_mx`` is ``--compute_dtype``; ``-cfp8_mx`` is
    ``-c fp8_mx``; the last occurrence wins whatever its spelling), None: not given. redteam8:
    those spellings were read as not given (bf16), and ``-c X --compute_dtype Y`` on one line as
    X. ``--use_recipes`` is store_true: True."""
    assert read.launch is not None
    args = read.launch.args
    found: tuple[Any, Source] | None = None
    i = 0
    while i < len(args):
        word = args[i].text
        if word == "--":
            break
        name, eq, inline = word.partition("=")
        value: Any = None
        hit = False
        matches = [x for x in longs if x.startswith(name[2:])] if name.startswith("--") and \
            len(name) > 2 and long.startswith(name[2:]) else []
        if matches and name[2:] != long and len(matches) > 1:
            # redteam8: `--co fp8_mx` was read as not given (bf16); argparse refuses it
            found = (Unknown(f"{name[:40]} is ambiguous (--{', --'.join(matches[:4])}...): the "
                             "launcher's argparse stops (exit 2) and nothing trains"),
                     read.flags.get(name.lstrip("-"), (None, at))[1])
            i += 1 + (not eq and i + 1 < len(args) and not args[i + 1].text.startswith("-"))
            continue
        if matches:
            hit = True
        elif short is not None and word.startswith("-" + short) and not word.startswith("--"):
            rest = word[1 + len(short):]
            if word[1:] == short or (eq and name[1:] == short):
                hit = True
            elif rest and word[1:].split("=")[0] not in shorts:
                hit, eq, inline = True, "=", rest
        if hit:
            if long == "use_recipes":
                value = True if not eq else Unknown(f"{word[:40]} takes no value: argparse "
                                                    "stops the launcher (exit 2)")
            elif eq:
                value = inline
            elif i + 1 < len(args) and not args[i + 1].text.startswith("-"):
                i += 1
                value = args[i].text if args[i].opaque is None else Unknown(str(args[i].opaque))
            else:
                value = Unknown(f"{word[:40]} is given no value: argparse stops the launcher "
                                "(exit 2)")
            key = name.lstrip("-") if not (short and word[1:].startswith(short) and
                                           not word.startswith("--")) else short
            found = (value, read.flags.get(key, (None, at))[1])
        i += 1
    return found
