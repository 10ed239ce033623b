"""FlagScale (BAAI): Hydra experiment configs whose ``train`` section becomes Megatron-LM flags.

How FlagScale runs a training job (read at FlagOpen/FlagScale v0.9.0, 396cfce5): ``python run.py
--config-path <dir> --config-name <name> action=run`` composes ``<dir>/<name>.yaml`` with Hydra
(``run.py`` ``@hydra.main``); its ``defaults:`` list places ``train/<option>.yaml`` under
``train`` (``defaults: [_self_, {train: 16b_a3b}]``). For ``experiment.task.backend: megatron``
the runner (flagscale/runner/runner_train.py ``_get_args_megatron`` l.30-48) takes
``train.system``, ``train.model`` and ``train.data``, merges them (``dict.update``, later wins)
and flattens every leaf into a flag by its own name (flagscale/runner/utils.py
``flatten_dict_to_args`` l.271-290: nested mappings such as ``system.precision`` only group keys,
a ``true`` bool is ``--flag``, a ``false`` one is left out, ``_`` becomes ``-``); the flags go to
``experiment.task.entrypoint`` (FlagScale's vendored Megatron-LM ``train_gpt.py``). So the flags
are read here as ``config.flagscale.args.<megatron dest name>`` and the intent is Megatron's
(:func:`.megatron.megatron_intent`): ``system.precision.fp8_format: hybrid`` is ``--fp8-format
hybrid``; ``bf16: true`` with no fp8 key is BF16.

The launch line ``run.py --config-path D --config-name N action=run`` links ``D/N.yaml`` (read as
above). Unknown, with why: another backend (vllm, robotics, ...), a composition that fails (a group
option missing, a path out of the job), a launch line without ``--config-name``, and a launch
line's override of a training value (not applied here; ``action=``, ``experiment.exp_dir=`` /
``exp_name=`` and ``hydra.*`` change no training value).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived, IntentOut, View
from preflight.frameworks.megatron import megatron_intent
from preflight.reading import launch
from preflight.reading.hydracompose import Failed, compose_file
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.types import ReaderOutput

KIND = "flagscale"
PREFIX = f"config.{KIND}"
ARGS = f"{KIND}.args"
_REPO = "https://github.com/FlagOpen/FlagScale/blob/396cfce5948a3b9c8b43b50ccaff35d199460065"
_SECTIONS = ("system", "model", "data")
_IGNORED = frozenset({"log_dir", "details_dir", "scripts_dir", "pids_dir"})   # runner_train l.44
_TASK_TYPES = frozenset({"train", "inference", "serve", "compress", "rl"})


def score(data: Any) -> int:
    """An ``experiment`` mapping with a ``task`` of a known type or a backend, and a runner,
    exp_name or action: FlagScale's experiment layout (no other reader's config has it)."""
    exp = data.get("experiment")
    if not isinstance(exp, dict):
        return 0
    task = exp.get("task")
    if not isinstance(task, dict) or not ({"backend", "type"} & set(task)):
        return 0
    if task.get("type") not in _TASK_TYPES and "entrypoint" not in task:
        return 0
    return 20 + 4 * len({"runner", "exp_name", "envs", "cmds"} & set(exp)) + \
        4 * ("action" in data) + 4 * ("train" in data or "defaults" in data)


def _args(facts: Mapping[str, Any], prov: Mapping[str, str]) -> tuple[dict[str, Any],
                                                                        dict[str, str]]:
    """The Megatron flags ``_get_args_megatron`` builds: each leaf of ``train.system`` /
    ``train.model`` / ``train.data`` by its last name, later sections winning; a false bool
    is no flag (left out, so Megatron's default holds)."""
    out: dict[str, Any] = {}
    where: dict[str, str] = {}
    for section in _SECTIONS:
        head = f"{PREFIX}.train.{section}."
        for name, value in facts.items():
            if not name.startswith(head):
                continue
            leaf = name.rpartition(".")[2]
            if leaf in _IGNORED or value is False:
                continue
            out[f"{PREFIX}.args.{leaf}"] = value
            where[f"{PREFIX}.args.{leaf}"] = prov.get(name, "")
    return out, where


def read(path: str, parsed: Parsed) -> ReaderOutput:
    """The experiment config composed over its defaults (Hydra), its keys under
    ``config.flagscale.*`` and the Megatron flags it makes under ``config.flagscale.args.*``."""
    try:
        tree = compose_file(path)
        tree.resolve()
    except (Failed, ParseError, RecursionError) as exc:
        reason = getattr(exc, "message", None) or str(exc)
        return ReaderOutput({f"{PREFIX}.compose": Unknown(
            f"FlagScale's Hydra composition of {path} was not completed here: {reason[:200]}")},
            {f"{PREFIX}.compose": f"{path}:1"})
    facts, prov = tree.facts(PREFIX)
    args, where = _args(facts, prov)
    return ReaderOutput({**facts, **args}, {**prov, **where})


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    top = View(f, KIND, prov)
    for key in ("compose", "base_config", "overrides"):
        broken = top.unknown(key)
        if broken is not None:
            out = IntentOut()
            out["fp8"] = (broken, top.src(key))
            return out.build()
    backend = top.get("experiment.task.backend")
    if backend != "megatron":
        out = IntentOut()
        out["fp8"] = (Unknown(f"FlagScale backend {str(backend)[:40]!r}: only its Megatron "
                              "backend is read"), top.src("experiment.task.backend",
                                                          top.src("experiment.task.type")))
        return out.build()
    out = megatron_intent(View(f, ARGS, prov), f, prov)
    out.runs_on = ("megatron",)    # FlagScale's vendored Megatron-LM builds and trains the model
    return out.build()


# `python run.py --config-path DIR --config-name NAME action=run` (run.py's @hydra.main; the
# action= override is FlagScale's own, which keeps a generic Hydra `run.py` out)
COMMAND = re.compile(r"(?<![\w.-])run\.py(?=[^\n;&|]*(?<![\w.-])action=(?:run|dryrun|test|auto_tune)"
                     r"(?![\w-]))")
OTHER = re.compile(r"(?<![\w.-])run\.py(?=[^\n;&|]*(?<![\w.-])action=(?:stop|query)(?![\w-]))")
TRAINS = (("run.py",),)
_PATH, _NAME = ("--config-path", "-cp"), ("--config-name", "-cn")
_OWN_OVERRIDES = ("action=", "experiment.exp_dir=", "experiment.exp_name=", "hydra.")


def _run_args(out: launch.Out, words: list[launch.Token], variables: dict[str, str]) -> None:
    """``--config-path`` / ``--config-name`` (``=`` or a separate word) linked as the experiment
    config; an override of a training value (``train.system.precision.fp8_format=hybrid``) is
    not applied here, so it makes FP8 Unknown."""
    found: dict[str, Any] = {}
    i = 0
    while i < len(words):
        word, pos = words[i]
        flag, eq, inline = word.partition("=")
        if flag in _PATH + _NAME:
            raw = inline if eq else (words[i + 1][0] if i + 1 < len(words) else None)
            found["path" if flag in _PATH else "name"] = (launch.value(raw, variables), pos)
            i += 1 if eq else 2
            continue
        if eq and not flag.startswith("-") and not word.startswith(_OWN_OVERRIDES):
            out.put(f"{PREFIX}.overrides", Unknown(
                f"run.py override {word[:80]!r} is not applied here: what it changes is not "
                "known"), pos)
        i += 1
    (folder, _), (name, at) = found.get("path", (".", 0)), found.get("name", (None, 0))
    if name is None:
        out.put(f"{PREFIX}.base_config", Unknown("run.py without --config-name: the "
                                                 "experiment config is not named"), at)
        return
    target = (os.path.join(folder, name if name.endswith(".yaml") else name + ".yaml")
              if isinstance(folder, str) and isinstance(name, str) else name)
    out.link(target, KIND, at, "run.py --config-name", own=True)


def read_text(path: str, text: str, outer: dict[str, str] | None = None) -> ReaderOutput:
    """A script running FlagScale's ``run.py ... action=run``: its experiment config, linked."""
    return launch.read_tool_script(path, text, outer, train=COMMAND, other=OTHER, kind=KIND,
                                   key="run.py", train_args=_run_args, config_ends=(".yaml",),
                                   skip_flags=True)


FRAMEWORK = Framework(
    kind=KIND, title="FlagScale", formats=("yaml",), score=score, read=read, derive=derive,
    precedence=34, duplicate_keys="error",
    # run from its source checkout (run.py, flagscale/, its vendored Megatron-LM)
    from_source=True, launch=Launch(read_text, command=COMMAND, trains=TRAINS),
    shape_keys=(("heads", ("args.num_attention_heads",)), ("kv_heads", ("args.num_query_groups",)),
                ("layers", ("args.num_layers",)), ("seq", ("args.seq_length",)),
                ("micro_batch", ("args.micro_batch_size",)),
                ("tp", ("args.tensor_model_parallel_size",)), ("gated", ("args.swiglu",))),
    defaults=(
        Default("train.system.precision (no fp8_format)", "no --fp8-format: no FP8", "all",
                f"{_REPO}/flagscale/runner/utils.py#L271-L290"),
        Default("a false bool under train.*", "left out (Megatron's default)", "all",
                f"{_REPO}/flagscale/runner/utils.py#L284-L286"),
    ),
)
"""Source of the line numbers: FlagOpen/FlagScale v0.9.0 (see the module docstring)."""
