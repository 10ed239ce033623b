"""verl's launch line: ``python3 -m verl.trainer.main_ppo [--config-path D --config-name N]
key=value ...`` (or another trainer entry point, :mod:`.verl_shipped`), read into
``config.verl.*`` facts over the config it names, for :mod:`.verl`.

Hydra composes the config ``--config-name`` names (``@hydra.main(config_path="config",
config_name="ppo_trainer")``, verl/trainer/main_ppo.py at v0.9.0), then applies the overrides
in order.
"""

from __future__ import annotations

import os
import re
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import flashrl
from preflight.frameworks.verl_shipped import ENTRY, HYDRA_MAIN, module_path, shipped
from preflight.reading.overridelaunch import LaunchRead, Syntax, find_launch, merged_facts
from preflight.reading.refs import locate, under_roots
from preflight.reading.types import ConfigProblem, ReaderOutput

KIND = "verl"
PREFIX = f"config.{KIND}"
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w)),
                value_flags=frozenset({"config-path", "config-name", "config-dir", "cp", "cn",
                                       "cd"}))


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """The ``main_ppo`` launch line: base config named by --config-path/--config-name, then
    its overrides in order (Hydra applies them after composing the config)."""
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    name = read.flag("config-name", "cn")
    cpath = read.flag("config-path", "cp")
    entry = read.launch.entry.text
    entry_src = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    base: tuple[Any, Source] | None = None
    packaged: tuple[str, str] | None = None
    if name is None:
        # Hydra composes the config_name @hydra.main declares (verl_shipped.HYDRA_MAIN)
        default = HYDRA_MAIN.get(module_path(entry))
        packaged = shipped(entry, "config", default) if default else None
        if packaged is None:
            base = (Unknown(f"{entry} composes the config its @hydra.main names, which is not "
                            "in the job and which fp8-doctor does not know"), entry_src)
    elif not isinstance(name[0], str):
        base = name
    else:
        file = name[0] if name[0].endswith((".yaml", ".yml")) else name[0] + ".yaml"
        # without --config-path, Hydra looks in the config_path of @hydra.main ("config")
        cp = ("config", name[1]) if cpath is None else cpath
        if not isinstance(cp[0], str):
            base = cp
        else:
            where = _config_file(entry, cp[0], file)
            # a shipped config: verl's (or the recipe's) own, unless the job holds that file
            # (`python3 recipe/dapo/main_dapo.py` in a checkout that is the job)
            ship = shipped(entry, cp[0], file)
            if ship is not None and (not entry.endswith(".py") or locate(where, path) is None):
                packaged = ship
            else:
                base = (where, name[1])
                if not os.path.isabs(cp[0].removeprefix("file://")):
                    base = _job_copy(read, base)
    merged = merged_facts(read, KIND, base, style="hydra", key="--config-name")
    facts, prov = merged.facts, merged.provenance
    facts[f"{PREFIX}.entry"], prov[f"{PREFIX}.entry"] = read.launch.entry.text, entry_src
    for ov, src in read.overrides:
        # `engine=automodel` picks config/engine/automodel.yaml (a Hydra group, verl_sft.py);
        # the merged config keeps only the engine.* keys the line sets after it
        if ov.path == ("engine",) and ov.op in ("set", "force", "add"):
            facts[f"{PREFIX}.engine_group"], prov[f"{PREFIX}.engine_group"] = ov.value, src
    if name is not None:
        facts[f"{PREFIX}.config_name"], prov[f"{PREFIX}.config_name"] = name
    if packaged is not None:
        # which packaged trainer config the shipped one stands on (its engine defaults)
        facts[f"{PREFIX}.packaged_config"] = packaged[0]
        prov[f"{PREFIX}.packaged_config"] = name[1] if name is not None else entry_src
    for var, value in read.launch.env:
        # what the script sets for the trainer: verl's Ray workers inherit the driver's
        # environment (trainer/constants_ppo.py get_ppo_ray_runtime_env at v0.9.0 adds its own
        # variables only), so `export NVTE_...=1` before main_ppo reaches Transformer Engine
        if var.startswith("NVTE_"):
            at = re.search(rf"(?m)^[ \t]*(?:export[ \t]+)?{var}=|[ \t]{var}=", text)
            facts[f"{PREFIX}.env.{var}"] = value
            prov[f"{PREFIX}.env.{var}"] = Source(path, text.count("\n", 0, at.start()) + 1) \
                if at else entry_src
    for key, (value, where) in flashrl.facts(path, text, read.launch.entry.offset,
                                             read.launch.before, outer).items():
        facts[f"{PREFIX}.{key}"], prov[f"{PREFIX}.{key}"] = value, where
    return ReaderOutput(facts, prov, tuple(read.problems), merged.linked)


def _config_file(entry: str, cpath: str, file: str) -> str:
    """The YAML ``--config-path CPATH --config-name FILE`` names, for the launch directory (the
    configs verl and verl-recipe ship are :func:`.verl_shipped.shipped`'s).

    Hydra takes a relative ``--config-path`` from the file that declares ``@hydra.main``, not
    from the current directory (hydra.cc "Hydra's command line flags"; internal
    ``compute_search_path_dir``): with ``python3 -m verl.trainer.main_ppo --config-path=config``
    (35 of verl v0.9.0's example scripts) that is verl/trainer/config of the installed verl."""
    cpath = cpath.removeprefix("file://")
    if os.path.isabs(cpath):
        return os.path.join(cpath, file)
    if entry.endswith(".py"):
        return os.path.join(os.path.dirname(entry), cpath, file)
    package = entry.rpartition(".")[0].replace(".", "/")
    # a folder of the installed package: found only where the job is a checkout of it
    return os.path.join(package, cpath, file)


def _reachable(read: LaunchRead, target: str) -> bool:
    """Whether :func:`.merged_facts` finds the relative ``target`` where the command runs (after
    the script's ``cd``, else next to the script or in the folder it was started from)."""
    if read.folder is not None:
        folder = read.folder[0]
        return folder is not None and \
            locate(os.path.normpath(os.path.join(folder, target)), read.path) is not None
    here = read.started
    return bool(here and locate(os.path.join(here, target), read.path)) or \
        locate(target, read.path) is not None


def _job_copy(read: LaunchRead, base: tuple[str, Source]) -> tuple[str, Source]:
    """The job's own copy of the config ``--config-name`` names, where the command cannot reach
    it: holdout22's swiss-ai fork job ``cd``s to its clone on the cluster
    (``/capstor/.../verl``, outside the job: never opened) and runs ``-m verl.trainer.main_ppo
    --config-name=grpo_math_base``, whose Hydra search path is the installed verl's
    ``verl/trainer/config`` (``pip install -e .`` of that clone). The job holds the fork's
    ``verl/trainer/config/grpo_math_base.yaml`` (for a recipe entry, ``recipe/<x>/config/``):
    it is read, with the assumption stated as a warning; without such a copy nothing changes.
    Only that package path: a ``config/`` or ``conf/`` folder elsewhere in the job is not where
    Hydra looks (tests/frameworks/test_launch_frameworks.py)."""
    where, src = base
    if _reachable(read, where):
        return base
    found = under_roots(where)
    if found is None:
        return base
    folder, why = read.folder if read.folder is not None else (None, None)
    place = (f"{folder[:160]}, the folder the script changes to (not opened)" if folder else
             f"the folder the script changes to ({why[:120]})" if why else
             "where the command runs")
    read.problems.append(ConfigProblem(read.path, src.line, (
        f"--config-name {os.path.basename(where)} is looked up in {place}; the job's own "
        f"{where} was read instead, assuming the verl that runs is this checkout"),
        level="warning", code="reference"))
    return found, src
