"""Primus launch lines: the experiment YAML they run and the ``--key value`` overrides they pass,
read at AMD-AGI/Primus v26.5.1 (commit 9a86ba8c; 6703ab9f is the tag object).

- ``primus-cli [global options] direct|container|slurm [options] -- train pretrain|posttrain
  --config X [--key value ...]`` (runner/primus-cli; ``--config`` before the mode is the CLI's
  own ``.primus.yaml``, not the experiment), and ``python|torchrun ... primus/cli/main.py train
  pretrain --config X ...`` (primus/cli/subcommands/train.py; ``--exp`` is an alias of
  ``--config``, primus/core/launcher/parser.py ``_add_common_train_args``);
- ``examples/run_pretrain.sh`` and ``run_local_`` / ``run_slurm_`` / ``run_k8s_pretrain.sh``:
  the experiment is ``$EXP`` from the environment, the script's arguments are passed on as
  overrides (run_pretrain.sh l.368-381 ``... train pretrain --config $EXP ... $*``); the
  ``*_cli.sh`` variants pass ``--config "$EXP"`` the same way.

The words after the training subcommand other than the parser's own (``--config``, ``--exp``,
``--data_path``, ``--backend_path``, ``--export_config``) are overrides of the trainer module
(primus/core/utils/arg_utils.py ``parse_cli_overrides``: ``--key value``, ``--key=value``, a bare
``--flag`` is true; values ``true``/``false`` any case are booleans), read as
``config.primus.args.<key>`` and ``config.megatron.<key>`` at their line; they win over the
experiment YAML (read after the script). The script is walked as the shell runs it
(:func:`.megatron_walk.commands`): an argument from an ``if`` / ``case`` branch the text does not
decide, or a value known only at run time, is Unknown with the reason; ``$EXP`` unset or known only
at run time makes the experiment Unknown (never "no FP8").
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import megatron_walk
from preflight.frameworks import primus_backends as backends
from preflight.frameworks import primus_presets as presets
from preflight.reading import shellcalls
from preflight.reading.boundary import above
from preflight.reading.launchenv import process_env
from preflight.reading.parse import Parsed, ParseError, parse_yaml
from preflight.reading.parse import read_text as read_file
from preflight.reading.parsefacts import MAX_ITEMS_PER_FILE
from preflight.reading.refs import named, resolve_missing
from preflight.reading.shellexpand import Arg, Launch
from preflight.reading.shellvars import collect_variables, runtime_reason, strip_comments
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

KIND = "primus"
PREFIX = f"config.{KIND}"
ARGS = f"{KIND}.args"
MEGATRON = "config.megatron"
MAX_LAUNCHES = 8
_SCRIPT = r"run_(?:local_|slurm_|k8s_)?(?:pre|post)train(?:_cli)?\.sh"
COMMAND = re.compile(r"(?<![\w.-])(?:primus-cli|primus/cli/main\.py|primus\.cli\.main|" + _SCRIPT
                     + r")(?![\w.-])")
_ENTRY = re.compile(r"(?:^|/)(?:primus-cli|primus/cli/main\.py|primus\.cli\.main|" + _SCRIPT + r")$")
_OWN = {"config", "exp", "data_path", "backend_path", "export_config"}
_DESTS = {"fp8": "fp8_format", "fp4": "fp4_format"}
# parse_cli_overrides: `--a.b v` nests (arg_utils.py l.95-97), a bare `--flag` is true
_ARITY = megatron_walk.Arity(frozenset(), frozenset(), frozenset(), dotted=True)


def dest(key: str) -> str:
    """The name a Megatron setting has in the facts: Megatron-LM's flag name (``--fp8-format``,
    whose argparse dest is ``fp8``), as the Megatron reader names it."""
    return _DESTS.get(key, key)


def _entry(word: str) -> bool:
    return _ENTRY.search(word.strip("\"'")) is not None


def read_text(path: str, text: str, outer: dict[str, str] | None = None) -> ReaderOutput:
    """The experiment each Primus training launch runs, linked, and its overrides."""
    found = megatron_walk.commands(text, outer, _entry, MAX_LAUNCHES + 1)
    facts: dict[str, Any] = {}
    prov: dict[str, str] = {}
    if found is None:
        facts[f"{PREFIX}.base_config"] = Unknown(
            "the script could not be walked here (past the shell reader's bounds): which "
            "experiment it runs is not known")
        prov[f"{PREFIX}.base_config"] = path
        return ReaderOutput(facts, prov)
    runs = [r for r in (_training(lr, lambda lr: _process(path, text, lr.entry.offset,
                                                          outer or {}))
                        for lr in found[:MAX_LAUNCHES]) if r is not None]
    if not runs:
        return ReaderOutput()
    lines = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def line(offset: int) -> int:
        return megatron_walk._line(lines, offset)

    configs = {repr(exp.text if isinstance(exp, Arg) else exp) for _, exp in runs}
    lr, exp = runs[0]
    where = Source(path, line(lr.entry.offset))
    linked: tuple[Linked, ...] = ()
    if len(configs) > 1:
        exp = Unknown(f"the Primus launches at lines {', '.join(str(line(r.entry.offset)) for r, _ in runs)} "
                      "run different experiments: which one runs is not known here")
    elif isinstance(exp, Arg) and exp.opaque is None and exp.conditional is None:
        link = named(exp.text.strip("\"'"), KIND, path, Source(path, line(exp.offset)),
                     key="--config", line=line(exp.offset))
        linked = (link,)
    elif isinstance(exp, Arg):
        exp = Unknown(f"the experiment {exp.text[:60]!r} is known only when the script runs"
                      + (f" ({exp.opaque[:80]})" if exp.opaque else " (set in an if/case "
                         "branch the text does not decide)"))
    if isinstance(exp, Unknown):
        facts[f"{PREFIX}.base_config"], prov[f"{PREFIX}.base_config"] = exp, where
    facts[f"{PREFIX}.launch"], prov[f"{PREFIX}.launch"] = lr.entry.text[:120], where
    got = megatron_walk.read(path, text, [replace(r, before=()) for r, _ in runs],
                             f"config.{ARGS}", _ARITY)
    module = _module(linked[0]) if linked else None
    backend = module[3].get("framework") if module is not None else None
    # the overrides are the backend's settings: TorchTitan's by section (parse_cli_overrides
    # nests `--training.steps 5`), Megatron-Bridge's recipe arguments; Megatron's otherwise
    into = "config.torchtitan" if backend == "torchtitan" else None if \
        backend == "megatron_bridge" else MEGATRON
    for name, value in got.facts.items():
        key = name[len(f"config.{ARGS}") + 1:]
        if key in _OWN:
            continue
        value = _coerced(value)
        if key in _DESTS and value is True and into == MEGATRON:
            # `--fp8` alone: parse_cli_overrides gives True
            value = Unknown(f"--{key} is given without a format: Primus passes {key}=True, "
                            "which Megatron-LM's FP8 setup refuses (only e4m3 / hybrid)")
        key = dest(key) if into == MEGATRON else key
        at = "config.torchtitan" if into == "config.torchtitan" else f"config.{ARGS}"
        facts[f"{at}.{key}"], prov[f"{at}.{key}"] = value, got.prov[name]
        if value is not None and into == MEGATRON:
            facts[f"{MEGATRON}.{key}"], prov[f"{MEGATRON}.{key}"] = value, got.prov[name]
    env = _process(path, text, lr.entry.offset, outer or {}) if linked else {}
    settings, more, more_prov = _from_env(linked[0], env, where) if linked else ({}, {}, {})
    for key, (value, src) in settings.items():
        for name in (f"config.{ARGS}.{dest(key)}", f"{MEGATRON}.{dest(key)}"):
            if name not in facts and (value is not None or name.startswith("config.p")):
                facts[name], prov[name] = value, src
    for name, value in more.items():         # a backend's presets named from the script
        if name not in facts:
            facts[name], prov[name] = value, more_prov[name]
    if any(n.startswith(f"{MEGATRON}.") for n in facts):
        facts[f"{MEGATRON}.args_of"], prov[f"{MEGATRON}.args_of"] = KIND, where
    problems: tuple[ConfigProblem, ...] = tuple(got.problems)
    return ReaderOutput(facts, prov, problems, linked)


def _process(path: str, text: str, at: int, outer: dict[str, str]) -> dict[str, Any]:
    """The environment the launch at ``at`` gives Primus, whose yaml_loader reads ``os.environ``
    (redteam17: the script's variables as text gave it ones never exported, unset, set in a
    subshell or a function never called, and dropped a run-time value, leaving the default):
    :func:`.launchenv.process_env`, a value only the run knows as Unknown."""
    clean = strip_comments(text.replace("\r\n", "\n"))
    caller = outer.get(shellcalls.CALLER, path)
    given = process_env(path, clean, at, collect_variables(clean, dict(outer), script=path),
                        [(n, caller) for n in outer.get(shellcalls.ENVIRON, "").split(",") if n])
    return {name: Unknown(why) if isinstance(value, str) and
            (why := runtime_reason(value)) is not None else value for name, value, _ in given}


def _from_env(link: Linked, env: dict[str, Any], where: Source) -> tuple[
        dict[str, tuple[Any, str]], dict[str, Any], dict[str, str]]:
    """What the experiment's ``${VAR:default}`` give under the script's environment
    (yaml_loader.py reads ``os.environ``): Megatron overrides that read a variable the script
    sets (``seq_length: ${PRIMUS_SEQ_LENGTH:4096}`` under ``export PRIMUS_SEQ_LENGTH=8192``), and
    the presets composed again when the module or model preset is named from one (``model:
    ${MODEL:llama3.1_8B}.yaml``), as Primus resolves the name (a preset neither in the job nor
    pinned: its settings Unknown). Returns the Megatron settings by key, and a TorchTitan /
    Megatron-Bridge module's facts and provenance."""
    got = _module(link) if env else None
    if got is None:
        return {}, {}, {}
    found, parsed, name, module = got
    out: dict[str, tuple[Any, str]] = {}
    overrides = module.get("overrides")
    overrides = overrides if isinstance(overrides, dict) else {}
    given = {k: module.get(k) for k in ("framework", "config", "model")}
    # a name that reads a variable the script sets (or any, `*`: a sourced file, `set -a`,
    # redteam19): the rest is as the YAML's reader took it
    moved = {k for k, v in given.items()
             if isinstance(v, str) and any(n in env or "*" in env for n in presets.env_names(v))}
    resolved = {k: _env_value(str(v), env) if k in moved else
                presets.env_value(v) if isinstance(v, str) else v for k, v in given.items()}
    framework = resolved["framework"]
    at = ("modules", name)
    root = above(found, "primus/configs", True, 12)
    if "framework" in moved and framework != presets.env_value(str(given["framework"])):
        # the YAML's reader composed the default backend's presets, not this one's
        why = Unknown(f"the backend is named from a variable the script sets "
                      f"({str(given['framework'])[:60]!r} is {str(framework)[:40]!r} here): its "
                      "presets are not composed here")
        return {}, {f"{PREFIX}.framework": why}, {f"{PREFIX}.framework": where}
    if framework in ("torchtitan", "megatron_bridge"):
        prefix = "config.torchtitan" if framework == "torchtitan" else f"config.{ARGS}"
        reads = {k: raw for k, raw in _strings(overrides)
                 if any(n in env or "*" in env for n in presets.env_names(raw))}
        if not moved and not reads:
            return {}, {}, {}
        facts, prov, _ = backends.read_backend(found, parsed, module, at, root, resolved)
        for key, raw in reads.items():           # `seq_len: ${SEQ:4096}` under `export SEQ=8192`
            facts[f"{prefix}.{key}"], prov[f"{prefix}.{key}"] = _env_value(raw, env), where
        return {}, facts, prov
    if framework != "megatron":
        return {}, {}, {}
    if moved & {"config", "model"}:
        composed = presets.compose(root, "megatron", resolved["config"], resolved["model"],
                                   Source(found, parsed.line_of(at)))
        # as the YAML's reader: a model preset's keys only from a preset the job holds
        out.update({k: valued for k, valued in composed.values.items() if k not in overrides
                    and (k in presets.SWITCHES or k in presets.MODEL_KEYS and
                         str(valued[1]).startswith(root or "\0"))})
    for key, raw in overrides.items():
        if isinstance(key, str) and isinstance(raw, str) and \
                any(n in env or "*" in env for n in presets.env_names(raw)):
            out[key] = (_env_value(raw, env), where)
    return out, {}, {}


def _strings(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The string settings of a nested mapping by dotted path (bounded as a preset is read)."""
    out: list[tuple[str, str]] = []
    todo: list[tuple[str, Any]] = list(data.items())
    budget = MAX_ITEMS_PER_FILE
    while todo and budget > 0:
        key, value = todo.pop(0)
        budget -= 1
        if isinstance(value, dict) and key.count(".") < presets.MAX_DEPTH:
            todo.extend((f"{key}.{k}", v) for k, v in value.items() if isinstance(k, str))
        elif isinstance(value, str):
            out.append((key, value))
    return out


def _module(link: Linked) -> tuple[str, Parsed, str, dict[str, Any]] | None:
    """The experiment ``link`` names, read here: its path, parse, trainer module name and
    settings."""
    found = resolve_missing(link, (), ()) if link.missing else link.path
    if found is None:
        return None
    try:
        parsed = parse_yaml(read_file(found))
    except ParseError:
        return None
    data = parsed.data
    modules = data.get("modules") if isinstance(data, dict) else None
    name = presets.trainer_module(modules) if isinstance(modules, dict) else None
    got = modules.get(name) if name is not None and isinstance(modules, dict) else None
    return (found, parsed, name, got) if name is not None and isinstance(got, dict) else None


def _env_value(raw: str, env: dict[str, Any]) -> Any:
    """``raw`` as yaml_loader gives it in ``env``; Unknown where a variable it reads is
    (``*``: any variable may be set by what is not read, an env file or ``env -S``)."""
    size = len(raw)
    for name in presets.env_names(raw):
        got = env.get(name, env.get("*") if "*" in env else None)
        if isinstance(got, Unknown):
            return Unknown(f"${{{name}}} in {raw[:60]!r}: {got.reason}")
        size += len(got) if isinstance(got, str) else 0
        if size > presets.MAX_TEXT:       # redteam17: 40,000 `${A}` of a long A
            return Unknown(f"{raw[:60]!r} expands to more than {presets.MAX_TEXT:,} characters: "
                           "not a setting's value read here")
    return presets.env_value(raw, {k: v for k, v in env.items() if isinstance(v, str)})


def _training(lr: Launch, process: Any) -> tuple[Launch, Any] | None:
    """``(launch with only the training command's words, the experiment word or Unknown)``;
    None for a launch that does not train (``primus-cli direct -- benchmark gemm``)."""
    words = list(lr.args)
    name = lr.entry.text.strip("\"'")
    if name.endswith(("primus-cli", "main.py", "primus.cli.main")):
        at = next((i for i in range(len(words) - 1) if words[i].text == "train"
                   and words[i + 1].text in {"pretrain", "posttrain"}), None)
        if at is None:
            return None
        rest = _dashed(words[at + 2:])
        return replace(lr, args=rest), _config(rest)
    # the script runs $EXP from its environment: exported or given on the line (redteam17: a
    # plain `EXP=x` never reaches it; run_pretrain.sh stops, the *_cli.sh run their default)
    env = process(lr)
    exp: Any = env.get("EXP")
    if isinstance(exp, str):
        exp = Arg(exp, lr.entry.offset)
    elif exp is None and "EXP" in dict(lr.env):
        exp = Unknown(f"EXP is set in the script but not exported: {name.rsplit('/', 1)[-1]} "
                      "does not get it (run_pretrain.sh stops, the *_cli.sh run their default)")
    if exp is None:
        exp = Unknown(f"{name.rsplit('/', 1)[-1]} runs the experiment $EXP, which the script "
                      "does not set (or sets only at run time): the settings are not known")
    return replace(lr, args=_dashed(words)), exp


_KEY_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _dashed(words: list[Arg]) -> tuple[Arg, ...]:
    """``key=value`` words as ``--key=value``: parse_cli_overrides takes both alike."""
    return tuple(replace(w, text="--" + w.text) if w.opaque is None and _KEY_VALUE.match(w.text)
                 else w for w in words)


def _config(words: tuple[Arg, ...]) -> Any:
    """The ``--config`` / ``--exp`` word (the last one: argparse keeps it), or Unknown."""
    got: Any = Unknown("the training command names no --config experiment YAML")
    for i, word in enumerate(words):
        flag, eq, inline = word.text.partition("=")
        if flag not in {"--config", "--exp"}:
            continue
        if eq:
            got = replace(word, text=inline)
        elif i + 1 < len(words):
            got = words[i + 1]
    return got


def _coerced(value: Any) -> Any:
    """A value as ``parse_cli_overrides(type_mode="legacy")`` gives it: ``true``/``false`` in any
    case as booleans, ``None`` as null (its ``eval``); the rest as typed."""
    if isinstance(value, str):
        if value.lower() in {"true", "false"}:
            return value.lower() == "true"
        if value == "None":
            return None
    return value
