"""torchtitan launch lines: ``torchrun ... -m torchtitan.train --job.config_file X.toml
--a.b value`` and ``CONFIG_FILE=X.toml ./run_train.sh --a.b value`` (issue 22 item 2).

torchtitan's ``ConfigManager.parse_args`` (torchtitan/config/manager.py at v0.2.2, commit
73a0e6979dd10b6b1904098eb3c8f62c18ab87ce) loads the TOML named by ``--job.config_file`` /
``--job.config-file`` and hands it to ``tyro.cli`` as the default, so every ``--section.field
value`` (or ``--section.field=value``) on the line wins over the TOML. tyro takes ``-`` or ``_``
in names, a bare boolean flag means true and ``--section.no-field`` false, and ``list[str]``
fields are given comma-separated (``register_tyro_rules``: ``"a,b".split(",")``).
``run_train.sh`` passes ``"$@"`` on after ``--job.config_file ${CONFIG_FILE}`` (default
``./torchtitan/models/llama3/train_configs/debug_model.toml``).

The facts are ``config.torchtitan.*``, what the TOML reader gives, so the torchtitan framework
(:mod:`.torchtitan`) derives intent from the merged config.

From the Python config registries (PR 2386, 2026-02) the line is ``-m torchtitan.train --module M
--config NAME --a.b v`` (``MODULE=M CONFIG=NAME ./run_train.sh``): ``ConfigManager`` imports
``torchtitan.models.M.config_registry`` (then ``torchtitan.experiments.M``, then
``torchtitan.experiments.rl.examples.M``, dots as folders: ``--module graph_trainer.llama3``; a
module path it does not list as written) and calls ``NAME()``, and the flags win over what it
returns (torchtitan/config/manager.py l.21-130 at 00d1c0e4, l.94-140 at 73aed7f6). That file is linked with ``NAME`` as its entry, read by
:mod:`.torchtitan_py`; the flags are this script's facts, which come first. A registry not found
here leaves ``config.torchtitan.base_config`` Unknown (FP8 undetermined, not "no").
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading.overridelaunch import Syntax, find_launch, merged_facts
from preflight.reading.overrides import Override
from preflight.reading.refs import locate, named
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

KIND = "torchtitan"
PREFIX = f"config.{KIND}"
ENTRY = re.compile(r"^torchtitan\.train$|(?:^|/)torchtitan/train\.py$|(?:^|/)run_train\.sh$")
HINT = re.compile(r"torchtitan[./]train\b|--job\.config[-_]file\b|"
                  r"(?:^|[\s/])run_train\.sh\b[^\n]*--[a-z_]+\.[a-z_]|"
                  r"\b(?:MODULE|CONFIG)=[\w.]+[^\n]*[\s/]run_train\.sh\b|"
                  # README's bare `CONFIG_FILE=x.toml ./run_train.sh` (holdout17): the TOML is
                  # what marks it, run_train.sh being any repository's name
                  r"\bCONFIG_FILE=[\"']?[^\s\"';&|]*\.toml[\"']?[ \t][^\n]*?"
                  r"(?:^|[\s/])run_train\.sh\b")
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)), dotted_flags=True,
                value_flags=frozenset({"module", "config"}))
# list[str] fields of JobConfig at v0.2.2 (torchtitan/config/job_config.py)
_LISTS = re.compile(r"^(?:model\.converters|compile\.components|checkpoint\.exclude_from_loading|"
                    r"activation_checkpoint\.per_op_sac_force_recompute_mm_shapes_by_fqns|"
                    r"(?:[\w.]+\.)?filter_fqns|(?:[\w.]+\.)?fqns)$")
DEFAULT_CONFIG = "./torchtitan/models/llama3/train_configs/debug_model.toml"


def _tyro(ov: Override) -> Override:
    """A flag as tyro reads it: ``-`` = ``_``, ``--a.no-b`` = ``a.b`` false, lists split."""
    path = tuple(p.replace("-", "_") for p in ov.path)
    value = ov.value
    if path[-1].startswith("no_") and value is True:
        path, value = (*path[:-1], path[-1][3:]), False
    if isinstance(value, str) and _LISTS.match(".".join(path)):
        value = [v for v in value.split(",") if v]
    return Override(ov.op, path, value, ov.raw)


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    read.overrides[:] = [(_tyro(ov), src) for ov, src in read.overrides]
    base: tuple[Any, Source] | None = None
    for ov, src in read.overrides:
        if ov.path == ("job", "config_file"):
            base = (ov.value, src)
    line = Source(path, text.count("\n", 0, read.launch.entry.offset) + 1)   # (the statement
    # offset may be the newline before it: redteam2 saw line 1 for a command on line 2)
    env = dict(read.launch.env) if read.launch.entry.text.endswith("run_train.sh") else {}
    got = _registry(read, env, line)
    undecided = got if isinstance(got, Unknown) else None
    registry = got if isinstance(got, Linked) else None
    if base is None and registry is None and undecided is None and \
            read.launch.entry.text.endswith("run_train.sh"):
        base = (env.get("CONFIG_FILE", DEFAULT_CONFIG), line)
    merged = merged_facts(read, KIND, base, style="toml", key="--job.config_file")
    facts, prov, linked = merged.facts, merged.provenance, merged.linked
    if registry is not None:
        linked = (*linked, registry)
        if registry.missing:
            facts[f"{PREFIX}.base_config"] = Unknown(
                f"--module/--config: {registry.path} (which defines {registry.entry}()) was not "
                "found here")
            prov[f"{PREFIX}.base_config"] = registry.source
    elif undecided is not None:
        facts[f"{PREFIX}.base_config"], prov[f"{PREFIX}.base_config"] = undecided, line
    elif not any(n.startswith(f"{PREFIX}.") and n != f"{PREFIX}.base_config" for n in facts):
        return ReaderOutput(problems=tuple(read.problems))
    return ReaderOutput(facts, prov, tuple(read.problems), linked)


_NAME = re.compile(r"^[A-Za-z_][\w.]*$")


def _registry(read: Any, env: dict[str, str], line: Source) -> Linked | Unknown | None:
    """The config registry ``--module M --config NAME`` (or run_train.sh's MODULE / CONFIG)
    names, as a link with NAME as its entry; None without a ``--config`` / CONFIG; Unknown
    when either is decided at run time (``$C``) or no name torchtitan can import (``../x``,
    ``/etc``): read as no registry, FP8 came out "no" (redteam2)."""
    given = read.flag("config")
    config = given[0] if given else env.get("CONFIG")
    where = given[1] if given else line
    if config is None:
        return None
    got = read.flag("module")
    module = got[0] if got else env.get("MODULE", "llama3")
    for flag, value in (("--config", config), ("--module", module)):
        if isinstance(value, str) and _NAME.match(value):
            continue
        if isinstance(value, Unknown):
            return Unknown(f"{flag}: {value.reason}; the config registry it picks, and its "
                           "settings (FP8 among them), are not read")
        said = f"{flag} {str(value)[:80]!r} is no name torchtitan can import"
        read.problems.append(ConfigProblem(read.path, where.line, (
            f"{said} (torchtitan.models.<MODULE>.config_registry.<CONFIG>); its config "
            "registry was not read"), level="warning"))
        return Unknown(f"{said}: its config registry was not read")
    # A name torchtitan lists (models' _supported_models, experiments' _supported_experiments:
    # "llama3", "graph_trainer.llama3", "dapo_math") is looked for in models/, then
    # experiments/, then experiments/rl/examples/, dots as folders; any other is a module path
    # imported as written, M.config_registry first, then M itself (torchtitan/config/manager.py
    # l.94-140 at 73aed7f6). Which names are listed depends on the release, so every place is
    # tried in that order and the first found here is the one.
    folder = module.replace(".", "/")
    targets = [f"torchtitan/{d}/{folder}/config_registry.py" for d in
               ("models", "experiments", "experiments/rl/examples")]
    targets += [f"{folder}/config_registry.py", f"{folder}.py"] if "." in module else []
    target = next((t for t in targets if locate(t, read.path)), targets[0])
    if "." in module and target == targets[0] and not locate(target, read.path):
        # a dotted name found nowhere: an experiment's ("graph_trainer.llama3"), as torchtitan
        # lists them, is the likelier place to name
        target = targets[1]
    link = named(target, KIND, read.path, where, key="--config", line=where.line)
    return replace(link, entry=config)
