"""The NeMo Framework Launcher (NeMo 1.0; NVIDIA/NeMo-Framework-Launcher, formerly
NeMo-Megatron-Launcher): ``python3 launcher_scripts/main.py stages=[training]
training=llama/llama2_7b training.model.fp8=True ...``.

``main.py`` is ``@hydra.main(config_path="conf", config_name="config")`` (launcher_scripts/main.py
l.40 at tag 23.11, 3d41c31c): ``training=<family>/<name>`` picks the training config
``launcher_scripts/conf/training/<family>/<name>.yaml`` and every ``training.a.b=v`` override is
applied to it; the training stage hands that config, as it stands, to NeMo 1.x's
``megatron_gpt_pretraining.py`` (nemo_launcher/core/stages.py ``Training``), so what decides FP8
is NeMo 1.x's: ``model.fp8`` / ``fp8_e4m3`` / ``fp8_hybrid`` under ``model.transformer_engine``
(:func:`.nemo.from_nemo` derives it). The overrides are read from the launch line (bash arrays
expanded, their commented lines off: :mod:`preflight.reading.shellwords`) and stated as
``config.nemo_launcher.<key below training.>``.

The training config: where the job holds ``launcher_scripts/conf/training/<name>.yaml`` next to
the ``main.py`` the line runs, it is read under the overrides; else what the launcher ships for
that name decides the keys the overrides leave alone, from ``preflight/data/
nemo_launcher_training.json`` (tags 23.05-24.12, ``tools/nemo_launcher_shipped.py``) when every
release that ships the name agrees, else they are Unknown naming why (a name the launcher never
shipped, or releases that differ).

That config, as the launcher hands it to NeMo 1.x, is also stated as ``config.nemo.*``
(:func:`as_nemo`), so NeMo 1.x's rules judge launcher jobs; ``cd launcher_scripts; python3
main.py ...`` is the launcher too (README.md l.76 @ 23.11, 3d41c31c: ``python main.py``, run from
launcher_scripts; a bare ``main.py`` in that folder only).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import nemo
from preflight.frameworks._record import Default, Framework, Launch
from preflight.frameworks._view import Derived
from preflight.reading.overridelaunch import Syntax, find_launch, merged_facts
from preflight.reading.parse import Parsed, ParseError
from preflight.reading.refs import locate
from preflight.reading.shellcalls import walk
from preflight.reading.types import ReaderOutput

KIND = "nemo_launcher"
PREFIX = f"config.{KIND}"
ENTRY = re.compile(r"(?:^|/)launcher_scripts/main\.py$")
BARE = re.compile(r"^(?:\./)?main\.py$")
"""``cd launcher_scripts; python3 main.py ...`` (the launcher's README runs it so): a bare
``main.py`` is the launcher only where the folder it runs in is ``launcher_scripts``
(:func:`_in_launcher_scripts`)."""
HINT = re.compile(r"\blauncher_scripts/main\.py\b|\bcd[ \t]+[\"']?[^\s;&|]{0,300}?\blauncher_scripts/?"
                  r"[\"']?[ \t]*(?:;|&&|\n)[^\n]{0,160}?\bmain\.py\b")
# (main.py on the cd's line or the next; bounded repeats keep a megabyte of `cd launcher_scripts;`
# linear)
SYNTAX = Syntax(entry=lambda w: bool(ENTRY.search(w) or BARE.match(w)))
_CD = re.compile(r"(?:^|[;&|(]|\bthen|\bdo)\s*(?:builtin\s+)?(?:cd|pushd)\s+[\"']?([^\s;&|\"')]+)",
                 re.M)
SOURCE = "NVIDIA/NeMo-Framework-Launcher launcher_scripts/conf/training/{name}.yaml"
# the NeMo 1.x keys that decide FP8 and precision (tools/nemo_launcher_shipped.py KEYS)
KEYS = ("model.fp8", "model.fp8_e4m3", "model.fp8_hybrid", "model.transformer_engine",
        "model.megatron_amp_O2", "trainer.precision")
_GROUP = re.compile(r"[\w.-]+(?:/[\w.-]+)*")


def score(data: Any) -> int:
    """The launcher is read from its launch line; its training YAML alone is NeMo 1.x's."""
    return 0


def read_yaml(path: str, parsed: Parsed) -> ReaderOutput:
    raise ParseError("the NeMo Framework Launcher is read from the script that runs "
                     "launcher_scripts/main.py; pass the launch script")


def read_text(path: str, text: str, outer: dict[str, str]) -> ReaderOutput:
    """``launcher_scripts/main.py``'s line: the training config it picks and the ``training.*``
    overrides over it (the job's copy of that config read when it holds one)."""
    read = find_launch(path, text, SYNTAX, outer)
    if read.launch is None:
        return ReaderOutput(problems=tuple(read.problems))
    folder = None
    if BARE.match(str(read.launch.entry.text)):
        folder = _in_launcher_scripts(path, text, read.launch.offset, outer)
        if folder is None:      # another program's main.py
            return ReaderOutput(problems=tuple(read.problems))
    at = Source(path, text.count("\n", 0, read.launch.offset) + 1)
    choice: tuple[Any, Source] | None = None
    stages: tuple[Any, Source] | None = None
    kept = []
    for ov, src in read.overrides:
        if ov.path == ("training",):        # Hydra's group choice: the config's name
            choice = (ov.value, src)
        elif ov.path == ("stages",):
            stages = (ov.value, src)
        elif ov.path[:1] == ("training",) and len(ov.path) > 1:
            kept.append((replace(ov, path=ov.path[1:]), src))
    read.overrides[:] = kept                 # the training config's own keys, in order
    entry = str(read.launch.entry.text)
    base = None
    if choice is not None and isinstance(choice[0], str) and _GROUP.fullmatch(choice[0]) and \
            ".." not in choice[0].split("/") and "$" not in entry and not os.path.isabs(entry) \
            and folder != "":
        rel = os.path.join(folder or os.path.dirname(entry), "conf", "training",
                           f"{choice[0]}.yaml")
        found = locate(rel, path)
        base = (found, choice[1]) if found else None
    merged = merged_facts(read, KIND, base, style="hydra", key="training")
    facts, prov = merged.facts, merged.provenance
    facts[f"{PREFIX}.entry"], prov[f"{PREFIX}.entry"] = entry, at
    if choice is not None:
        facts[f"{PREFIX}.training_config"], prov[f"{PREFIX}.training_config"] = choice
    if stages is not None:
        facts[f"{PREFIX}.stages"], prov[f"{PREFIX}.stages"] = stages
    mirror, where = as_nemo(facts, prov, choice[0] if choice else None, base is not None)
    facts.update(mirror)
    prov.update(where)
    return ReaderOutput(facts, prov, tuple(read.problems), merged.linked)


def _in_launcher_scripts(path: str, text: str, offset: int, outer: dict[str, str]) -> str | None:
    """The folder (as the script names it, relative) a bare ``main.py`` runs in when that is
    ``launcher_scripts``: the folder the script moved to (:func:`.shellcalls.walk`), or, where
    that is a run-time value (``cd $TARGET_PATH/launcher_scripts``), the last ``cd`` written
    before the launch naming it; "" when known but absolute or computed (its config is not
    looked up); None: not ``launcher_scripts``."""
    moved = walk(path, text, outer).folder_at(offset)
    if moved.why is None:
        here = moved.path.rstrip("/")
        if os.path.basename(here) != "launcher_scripts":
            return None
        return here if not os.path.isabs(here) and ".." not in here.split("/") else ""
    cds = list(_CD.finditer(text, 0, offset))
    if cds and os.path.basename(cds[-1].group(1).rstrip("/")) == "launcher_scripts":
        return ""
    return None


_OWN = tuple(f"{PREFIX}.{k}" for k in ("entry", "training_config", "stages", "base_config"))
_UNSHIPPED = ("model.fsdp", "model.reduce_amax", "model.mcore_gpt")
"""Keys NeMo 1.x's rules read that the shipped-config table (:data:`KEYS`) does not carry."""


def as_nemo(facts: Mapping[str, Any], prov: Mapping[str, str], choice: Any, read_base: bool,
            ) -> tuple[dict[str, Any], dict[str, str]]:
    """The training config as the training stage hands it to NeMo 1.x's
    ``megatron_gpt_pretraining.py`` (nemo_launcher/core/stages.py ``Training`` @ 23.11), stated
    as the ``config.nemo.*`` facts NeMo 1.x's rules read (FP8D-NEMO-0001..0004, 0010): the
    overrides over the job's copy of the config, else over what the launcher ships (a key the
    table does not carry is Unknown, never "not set"). ``config.nemo.args_of`` keeps NeMo 1.x
    out of ``config.kinds`` (jobs/walk.py): the file read is the launcher's, its derive is this
    module's."""
    out: dict[str, Any] = {}
    src: dict[str, str] = {}
    at = str(prov.get(f"{PREFIX}.entry", "launch line"))
    for name, value in facts.items():
        if name.startswith(PREFIX + ".") and not name.startswith(_OWN):
            key = "config.nemo" + name[len(PREFIX):]
            out[key], src[key] = value, str(prov.get(name, at))
    for key in () if read_base else (*KEYS, *_UNSHIPPED):
        if f"config.nemo.{key}" in out:
            continue
        if key in _UNSHIPPED:
            value, where = Unknown(f"{key} is the training config's, which is not in the job "
                                   "(the launcher's shipped table does not carry it)"), at
        elif isinstance(choice, str):
            value, where = shipped(choice, key)
        else:
            value, where = Unknown("the training config (training=<family>/<name>) is not "
                                   "known here: what it sets is not known"), at
        out[f"config.nemo.{key}"], src[f"config.nemo.{key}"] = value, where
    out["config.nemo.args_of"], src["config.nemo.args_of"] = KIND, at
    return out, src


@lru_cache(maxsize=1)
def _shipped() -> tuple[dict[str, Any], ...]:
    """The launcher's training configs per release (none when the data is unreadable)."""
    try:
        text = resources.files("preflight").joinpath(
            "data/nemo_launcher_training.json").read_text("utf-8")
        return tuple({"version": str(r["version"]), "commit": str(r["commit"]),
                      "training": dict(r["training"])} for r in json.loads(text)["releases"])
    except (OSError, ValueError, KeyError, TypeError):
        return ()


def shipped(name: str, key: str) -> tuple[Any, str]:
    """What the launcher's own ``conf/training/<name>.yaml`` gives ``key`` (a key the config
    does not write: NeMo's ``cfg.get(key, False)``), when every release that ships ``name``
    agrees; else Unknown naming why."""
    found = [(r, r["training"][name]) for r in _shipped() if name in r["training"]]
    where = SOURCE.format(name=name)
    if not found:
        return Unknown(f"training={name} is no training config the NeMo Framework Launcher "
                       f"ships ({', '.join(r['version'] for r in _shipped())} read), and its "
                       "YAML is not in the job: what it sets is not known"), where
    values = {json.dumps(row.get(key, False)) for _, row in found}
    tags = ", ".join(r["version"] for r, _ in found)
    if len(values) > 1:
        each = "; ".join(f"{r['version']}: {row.get(key, False)}" for r, row in found)
        return Unknown(f"{where} sets {key} differently between launcher releases ({each}), "
                       "and which one runs is not known"), where
    value = found[0][1].get(key, False)
    said = "" if key in found[0][1] else " (not written: NeMo's default)"
    return value, f"{where}: {key} {value}{said} at every launcher release read ({tags})"


def derive(f: Mapping[str, Any], prov: Mapping[str, str]) -> Derived:
    """NeMo 1.x's reading (:func:`.nemo.from_nemo`) of the training config as the launch line
    leaves it: the overrides, over the job's copy of the config or what the launcher ships."""
    facts: dict[str, Any] = {}
    where: dict[str, str] = {}
    for name, value in f.items():
        if name.startswith(PREFIX + ".") and not name.startswith(
                (f"{PREFIX}.entry", f"{PREFIX}.training_config", f"{PREFIX}.stages")):
            key = "config.nemo." + name[len(PREFIX) + 1:]
            facts[key] = value
            if name in prov:
                where[key] = prov[name]
    choice = f.get(f"{PREFIX}.training_config")
    read_base = isinstance(f.get(f"{PREFIX}.base_config"), str)
    unknown: dict[str, Unknown] = {}
    for key in KEYS if not read_base else ():
        if f"config.nemo.{key}" in facts:
            continue
        value, src = shipped(choice, key) if isinstance(choice, str) else (Unknown(
            f"the training config (training=...) is not known here: {choice.reason}"
            if isinstance(choice, Unknown) else
            "the launch line names no training config (training=<family>/<name>): the "
            "launcher's default one (conf/config.yaml) is not read"),
            prov.get(f"{PREFIX}.entry", "launch line"))
        if isinstance(value, Unknown):
            unknown[key] = value
            continue
        facts[f"config.nemo.{key}"], where[f"config.nemo.{key}"] = value, src
    got = nemo.from_nemo(facts, where)
    values = dict(got.values)
    here = prov.get(f"{PREFIX}.training_config", prov.get(f"{PREFIX}.entry", "launch line"))
    asked = values.get("fp8", (None, ""))[0] is True
    if "model.fp8" in unknown:
        values["fp8"] = (unknown["model.fp8"], here)
        got = replace(got, overrides_fp8=None)
    elif asked and "model.transformer_engine" in unknown:
        # FP8 asked on the line; NeMo 1.x ignores it without model.transformer_engine, which
        # the training config not read decides
        got = replace(got, overrides_fp8=(Unknown(
            "model.fp8 takes effect only with model.transformer_engine true (NeMo 1.x), and "
            + unknown["model.transformer_engine"].reason), here))
    if asked and "model.fp8_e4m3" in unknown and "model.fp8" not in unknown:
        values["format"] = (unknown["model.fp8_e4m3"], here)
    stages = f.get(f"{PREFIX}.stages")
    if isinstance(stages, list) and "training" not in stages:
        # the stages run are others (fine_tuning, peft, conversion ...): their configs are
        # other groups (`fine_tuning=...`), not read here
        values["fp8"] = (Unknown(f"stages={stages!r:.80} runs no training stage: the configs of "
                                 "the stages it runs are not read here"),
                         prov.get(f"{PREFIX}.stages", here))
        got = replace(got, overrides_fp8=None)
    if "trainer.precision" in unknown and "precision" not in values:
        values["precision"] = (unknown["trainer.precision"], here)
    return replace(got, values=MappingProxyType(values))


FRAMEWORK = Framework(
    kind=KIND, title="NeMo Framework Launcher (NeMo 1.0)", formats=("text",), score=score,
    read=read_yaml, derive=derive, precedence=45,
    cancels_fp8_of=(KIND,),         # model.transformer_engine off ignores model.fp8 (NeMo 1.x)
    defaults=(Default("model.fp8", "the training config's (launcher presets: False but the "
                                   "gpt3 FP8 / MLPerf ones)", "launcher 23.05-24.12",
                      SOURCE.format(name="<name>")),),
    distributions=("nemo-toolkit",), from_source=True, rule_area="", runs_on=("megatron",),
    launch=Launch(read_text, command=HINT, heredoc_values=True),
    shape_keys=nemo.FRAMEWORK.shape_keys,
    duplicate_keys="error",
    file_strings_why=nemo.FRAMEWORK.file_strings_why,
)
