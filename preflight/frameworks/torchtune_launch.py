"""torchtune's launch line: ``tune run [TORCHRUN-OPTIONS] RECIPE --config CFG [key=value ...]``.

Read as torchtune parses it, at meta-pytorch/torchtune bd2a0fc7 (the last commit; no release
after v0.6.1):

- ``torchtune/_cli/run.py`` L168-L220: the torchrun options come first (torchrun's own parser:
  ``--nproc_per_node 8``, ``--nnodes 1``, bare ``--standalone``); the first other word is the
  recipe: a name of torchtune's recipe registry (``torchtune/_recipe_registry.py``) runs the
  *installed* package's recipe, anything else is a custom recipe run as a module from the current
  folder; ``--config`` is required; a config name of the registry (``llama3_1/8B_full``) is the
  installed package's YAML, anything else a path.
- ``torchtune/config/_utils.py`` ``_merge_yaml_and_cli_args`` (L121-L195): ``~key`` deletes
  (``~x._component_`` refused), every other word must be ``key=value`` with one ``=``
  (``arg.split("=")``), ``None`` is null, and a top-level key whose YAML value has a
  ``_component_`` takes the value as its component (``model=torchtune.models.x``).
- ``torchtune/config/_parse.py`` L50-L56: any other ``--flag`` after the recipe is refused.

Other ``tune`` commands (``tune download``, ``tune cp``, ``tune ls``) are blanked before the
line is looked for, so a ``tune download`` before ``tune run`` is not read as the job.
"""

from __future__ import annotations

import ast
import bisect
import os
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks.torchtune_shipped import shipped
from preflight.reading.launch import blank_commands
from preflight.reading.layered import Layered
from preflight.reading.overridelaunch import (
    LaunchRead,
    Merged,
    Syntax,
    find_launch,
    merged_facts,
)
from preflight.reading.overrides import MAX_OVERRIDES, Override, OverrideError, parse_hydra
from preflight.reading.parse import ParseError, read_text
from preflight.reading.pysource import parse
from preflight.reading.refs import locate
from preflight.reading.shellexpand import Arg
from preflight.reading.shellvars import strip_comments
from preflight.reading.types import ConfigProblem

TAG = "meta-pytorch/torchtune@bd2a0fc7"
RECIPES = frozenset({
    "full_finetune_single_device", "full_finetune_distributed", "lora_finetune_single_device",
    "lora_dpo_single_device", "lora_dpo_distributed", "full_dpo_distributed",
    "ppo_full_finetune_single_device", "lora_finetune_distributed",
    "dev/lora_finetune_distributed_multi_dataset", "generate", "dev/generate_v2",
    "dev/generate_v2_distributed", "dev/early_exit_finetune_distributed", "eleuther_eval",
    "quantize", "qat_single_device", "qat_distributed", "qat_lora_finetune_distributed",
    "knowledge_distillation_single_device", "knowledge_distillation_distributed",
    "dev/grpo_full_finetune_distributed", "dev/async_grpo_full_finetune_distributed",
})
"""The recipe registry's names at bd2a0fc7 (torchtune/_recipe_registry.py)."""
FP8_RECIPES = frozenset({"full_finetune_distributed"})
"""The registry recipes that read ``enable_fp8_training`` at bd2a0fc7 (``git grep
enable_fp8_training recipes/``: recipes/full_finetune_distributed.py L211 only; since 1075d9cd,
torchtune 0.7.0.dev; no release has it)."""
# torchrun options that take no value (torch/distributed/run.py get_args_parser, store_true;
# --virtual-local-rank since torch 2.3: redteam6, taken as taking a value it made the next flag's
# value the recipe)
_BARE = frozenset({"standalone", "m", "module", "no-python", "no_python", "run-path",
                   "run_path", "virtual-local-rank", "virtual_local_rank"})
# OmegaConf.from_dotlist loads each value with PyYAML's SafeLoader resolvers (YAML 1.1:
# omegaconf/basecontainer.py merge_with_dotlist, _utils.py get_yaml_loader @ v2.3.0), not Hydra's
# grammar: `enable_fp8_training=off` is False there (redteam6: read as the string 'off', true)
_YAML_BOOL = re.compile(r"(yes|Yes|YES|true|True|TRUE|on|On|ON)|"
                        r"(?:no|No|NO|false|False|FALSE|off|Off|OFF)")
_YAML_NULL = frozenset({"", "~", "null", "Null", "NULL", "None"})
_OTHER_TUNE = re.compile(r"(?<![\w./-])tune\s+(?!run\b)[a-z]\w*")
SYNTAX = Syntax(entry=lambda w: os.path.basename(w) == "tune",
                value_flags=frozenset({"config"}))


@dataclass
class TuneLayered(Layered):
    """OmegaConf's merge with torchtune's two rewrites of a ``key=value`` word."""

    absent: list[tuple[str, str]] = field(default_factory=list)
    """``~key`` removals of a key the config file does not hold (torchtune stops there)."""

    def apply(self, ov: Override, source: str) -> None:
        path, value = ov.path, ov.value
        if ov.op == "delete" and not isinstance(ov.value, Unknown) and not _holds(self.data, path):
            self.absent.append((".".join(path), source))
        if ov.op != "delete":
            raw = ov.raw.partition("=")[2]
            boolean = _YAML_BOOL.fullmatch(raw)
            if raw in _YAML_NULL:
                value = None              # `if v == "None": v = "!!null"` (_utils.py L180)
            elif boolean is not None:
                value = boolean.group(1) is not None
            here = self.get(path[:1])
            if len(path) == 1 and isinstance(here, dict) and "_component_" in here:
                path = (*path, "_component_")    # _utils.py L175-L177
        super().apply(Override(ov.op, path, value, ov.raw), source)


def _holds(data: Any, path: tuple[str, ...]) -> bool:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


def read_line(path: str, text: str, outer: dict[str, str]) -> tuple[LaunchRead, Merged] | None:
    """The ``tune run`` command of a script and the config it builds (None: no such line)."""
    text = text.replace("\r\n", "\n")
    read = find_launch(path, blank_commands(text, _OTHER_TUNE), SYNTAX, outer)
    if read.launch is None:
        return None
    args = list(read.launch.args)
    if not args or args[0].text != "run":
        return None
    line = LaunchRead(path, read.launch, problems=list(read.problems), folder=read.folder,
                      started=read.started)
    # a differing second `tune run` (find_launch's `force` overrides) stays Unknown
    forced = [(ov, src) for ov, src in read.overrides if ov.op == "force"]
    starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def where(arg: Arg) -> Source:
        return Source(path, bisect.bisect_right(starts, arg.offset))
    _sort(line, args[1:], where)
    # every `~key` is removed from the config file before any key=value is merged, wherever it
    # stands on the line (_utils.py L161-L173, merged at L198-L202 @ bd2a0fc7; redteam6:
    # `enable_fp8_training=True ~enable_fp8_training` was read as removed, FP8 "no")
    line.overrides.sort(key=lambda item: item[0].op != "delete")
    line.overrides.extend(forced)
    config = line.flag("config")
    copied = copies(text, path).get(os.path.normpath(config[0])) \
        if config is not None and isinstance(config[0], str) else None
    if config is not None and copied is not None:
        config = (Unknown(f"--config {config[0]} is written when the script runs, by `tune cp "
                          f"{copied[0]}` (line {copied[1]}): the config torchtune ships in the "
                          "installed package (_cli/cp.py L73-L110), not read here"), config[1])
    elif config is not None and isinstance(config[0], str) and _shipped(config[0], path):
        table = shipped(config[0])
        if table is not None:
            return line, _over_shipped(line, config, *table)
        config = (Unknown(f"--config {config[0]} is a config torchtune ships (its recipe "
                          "registry's name, read from the installed package: "
                          f"torchtune/_cli/run.py L190-L195 @ {TAG}), not a file of the job; "
                          "its settings were not read"), config[1])
    layered = TuneLayered()
    merged = merged_facts(line, "torchtune", config, style="paths", key="--config",
                          layered=layered)
    if isinstance(merged.facts.get("config.torchtune.base_config"), str):   # the file was read
        for key, src in layered.absent[:16]:
            line.problems.append(ConfigProblem(path, getattr(src, "line", None), (
                f"~{key[:80]}: the config file has no such key, and torchtune stops with "
                f"'Could not find key {key[:80]} in yaml config to remove' (config/_utils.py "
                f"L166-L172 @ {TAG}); the job would not start")))
    return line, merged


def _over_shipped(line: LaunchRead, config: tuple[Any, Source], values: dict[str, Any],
                  where: str) -> Merged:
    """The launch line's overrides over the settings of a shipped config (only those of
    :data:`.torchtune_shipped.KEYS` are known: the rest of the file is not in the table)."""
    layered = TuneLayered()
    layered.merge(values, lambda _p: where)
    merged = merged_facts(line, "torchtune", None, layered=layered)
    merged.facts["config.torchtune.base_config"] = f"shipped:{config[0]}"
    merged.provenance["config.torchtune.base_config"] = config[1]
    return merged


_CP = re.compile(r"(?<![\w./-])tune\s+cp\s+([^\n;&|]*)")


def copies(text: str, path: str | None = None) -> dict[str, tuple[str, int]]:
    """``tune cp NAME DEST`` lines: DEST (normalised, with the suffix ``tune cp`` gives it:
    _cli/cp.py L96-L98) -> (NAME, line). What they write is the installed package's file, unless
    ``-n`` / ``--no-clobber`` keeps a DEST that exists (cp.py L102-L105 @ bd2a0fc7): the job's
    file next to ``path`` then runs (redteam6: it was taken for the package's)."""
    out: dict[str, tuple[str, int]] = {}
    for n, m in enumerate(_CP.finditer(strip_comments(text))):   # `# tune cp ...` runs nothing
        if n >= 64:
            break
        given = m.group(1).split()[:16]
        keep = any(w.strip("\"'") in ("-n", "--no-clobber") for w in given)
        words = [w.strip("\"'") for w in given if not w.startswith("-")]
        if len(words) < 2 or "$" in words[1]:
            continue
        name, dest = words[0], words[1]
        suffix = ".yaml" if name not in RECIPES else ".py"
        # as pathlib sees DEST (cp.py L96-L98): `mine/` is the name `mine`, so `mine.py`
        # (redteam6: read as a folder, the stale mine.py of the job was read as the recipe)
        where = PurePosixPath(dest)
        if where.name and where.suffix != suffix:
            where = where.with_suffix(suffix)
        if keep and path is not None and locate(str(where), path) is not None:
            continue
        out.setdefault(os.path.normpath(str(where)), (name, text.count("\n", 0, m.start()) + 1))
    return out


def _shipped(config: str, path: str) -> bool:
    """torchtune looks a ``--config`` up in its registry first (_cli/run.py ``_get_config``
    before the path, L190-L195 @ bd2a0fc7): a shipped name is the package's file even where the
    job holds a file of that name (redteam6: ``llama3_1/8B_full`` in the job was read instead);
    registry names have no suffix."""
    return not config.endswith((".yaml", ".yml")) and "$" not in config and \
        (shipped(config) is not None or locate(config, path) is None)


def _sort(out: LaunchRead, args: list[Arg], where: Any) -> None:
    """torchrun options, the recipe, ``--config`` and the overrides, as torchtune takes them."""
    i = 0
    while i < len(args) and args[i].text.startswith("-") and out.flags.get("recipe") is None:
        flag, eq, raw = args[i].text.lstrip("-").partition("=")
        src = where(args[i])
        i += 1
        if eq or flag in _BARE or i >= len(args):
            out.flags[flag] = (raw if eq else True, src)
            continue
        out.flags[flag] = (_value(args[i]), src)
        i += 1
    if i >= len(args):
        return
    out.flags["recipe"] = (_value(args[i]), where(args[i]))
    i += 1
    count = 0
    while i < len(args):
        arg = args[i]
        src = where(arg)
        i += 1
        body = arg.text
        if body in ("--config", "-config") or body.startswith("--config="):
            if "=" in body:
                out.flags["config"] = (body.partition("=")[2], src)
            elif i < len(args):
                out.flags["config"] = (_value(args[i]), src)
                i += 1
            continue
        if body.startswith("-"):
            out.problems.append(ConfigProblem(out.path, src.line, (
                f"{body[:80]!r}: torchtune refuses flag arguments after the recipe "
                f"(config/_parse.py L50-L56 @ {TAG}: 'Please use --config or key=value "
                "overrides'); the job would not start")))
            if "=" not in body and i < len(args) and "=" not in args[i].text and \
                    not args[i].text.startswith(("-", "~")):
                i += 1          # its value: one refused argument, one problem
            continue
        count += 1
        if count > MAX_OVERRIDES:
            out.problems.append(ConfigProblem(out.path, src.line, (
                f"more than {MAX_OVERRIDES:,} overrides on one launch line; only those before "
                "this line were read"), level="warning", cut=True))
            return
        _override(out, arg, src)


def _override(out: LaunchRead, arg: Arg, src: Source) -> None:
    body = arg.text
    why = arg.opaque or (None if arg.conditional is None else
                         "set inside an if/case branch the launch command is not in")
    if body.startswith("~"):
        if "_component_" in body:
            out.problems.append(ConfigProblem(out.path, src.line, (
                f"{body[:80]!r}: torchtune refuses to remove a component from the command "
                f"line (config/_utils.py L160-L163 @ {TAG}); the job would not start")))
            return
        body = body.split("=")[0]
    elif body.count("=") != 1:
        out.problems.append(ConfigProblem(out.path, src.line, (
            f"{body[:80]!r}: torchtune takes each override as key=value with one '=' "
            f"(config/_utils.py L168-L173 @ {TAG}: `k, v = arg.split('=')`); the job would "
            "not start")))
        return
    try:
        out.overrides.append((parse_hydra(body, why), src))
    except OverrideError as exc:
        level = "warning" if exc.bound else "error"
        out.problems.append(ConfigProblem(out.path, src.line, f"{exc}: not read", level=level))


def _value(arg: Arg) -> Any:
    return Unknown(arg.opaque) if arg.opaque else arg.text


def custom_recipe(recipe: str, path: str) -> tuple[bool | Unknown, str]:
    """Whether a recipe that is not the registry's (a file of the job, run as a module) reads
    ``enable_fp8_training``, and the file read (its text only: it is never imported)."""
    target = recipe if recipe.endswith(".py") else recipe.replace(".", "/") + ".py"
    found = locate(target, path)
    if found is None:
        return Unknown(f"the recipe {recipe[:80]} is not torchtune's and its file was not found "
                       "in the job: whether it reads enable_fp8_training is not known"), target
    try:
        tree = parse(found, read_text(found))
    except ParseError as exc:
        return Unknown(f"the recipe {found} could not be read ({exc.message[:120]})"), found
    # the key is read as `cfg.get("enable_fp8_training", False)` (full_finetune_distributed.py
    # L211) or `cfg.enable_fp8_training`; a recipe whose code never names it cannot read it (a
    # comment or a sentence naming it reads nothing: redteam6) - unless code it imports does
    other, imports = None, 0
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and node.value == _KEY) or \
                (isinstance(node, ast.Attribute) and node.attr == _KEY):
            return True, found
        if other is None and isinstance(node, (ast.Import, ast.ImportFrom)) and imports < 64:
            imports += 1        # each looks for files: bounded (a file of 10,000 imports)
            other = _imports_a_recipe(node, found)
    if other is not None:
        # `class Mine(FullFinetuneRecipeDistributed)` from torchtune's recipes package, or the
        # job's own module doing the work (redteam6: "never reads", a false FP8D-TUNE-0001)
        return Unknown(f"the recipe {found} imports {other[:80]}, which may read "
                       "enable_fp8_training (not followed here)"), found
    return False, found


_KEY = "enable_fp8_training"


def _imports_a_recipe(node: ast.Import | ast.ImportFrom, found: str) -> str | None:
    """The module an import of ``found`` names when it may hold recipe code: torchtune's
    ``recipes`` package (the registry's recipes, importable from the wheel), a relative import
    or a module of the job next to the recipe."""
    if isinstance(node, ast.ImportFrom) and node.level:
        return "." * node.level + (node.module or "")
    names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
        [a.name for a in node.names]
    for name in names[:16]:
        if name == "recipes" or name.startswith("recipes.") or \
                locate(name.replace(".", "/") + ".py", found) is not None or \
                locate(name.replace(".", "/") + "/__init__.py", found) is not None:
            return name
    return None


HINT = re.compile(r"(?:^|[\s/;&|(])tune\s+run\b")
"""A launch script of torchtune's (jobs/scripts.py routes a text file to this reader by it)."""
