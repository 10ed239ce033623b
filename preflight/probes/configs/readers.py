"""Readers for the YAML/JSON/TOML kinds that need little more than flattening, plus accelerate.

- ``accelerate``: the ``accelerate config`` / ``--config_file`` YAML (old installs: JSON). Every
  key as written (the wizard's misspellings ``amax_history_length``, ``amax_compute_algorithm``,
  ``optimization_level`` stay visible; ``override_linear_precision`` keeps its type: list,
  ``"(false, false, false)"`` string or bare bool). ``deepspeed_config.deepspeed_config_file``
  is followed and read as a DeepSpeed JSON: accelerate opens it relative to the launch
  directory; we try the YAML's folder first, then the current directory, and report a missing
  file as a problem at the key's line.
- ``deepspeed``: the ``ds_config.json`` (``"auto"`` stays ``"auto"``; legacy ``bfloat16`` as
  written).
- ``torchtitan``: the job TOML, tables as written (``[quantize.linear.float8]`` ->
  ``config.torchtitan.quantize.linear.float8.*``).
- ``lightning``: LightningCLI YAML; ``trainer.strategy`` given as ``{class_path, init_args}`` also
  yields ``config.lightning.trainer.strategy = <class_path>``.
- ``hf_trainer``: ``TrainingArguments`` as YAML/JSON (HfArgumentParser, TRL, axolotl-style); a
  ``deepspeed: ds.json`` key is followed like accelerate's.
- ``nemo``: NeMo 1.x Hydra model YAML (``${...}`` resolved as OmegaConf would).
"""

from __future__ import annotations

import os
from typing import Any

from preflight.probes.configs._parse import Parsed, flatten
from preflight.probes.configs._types import ConfigProblem, Linked, ReaderOutput
from preflight.probes.configs.interpolate import resolve


def _where(path: str, parsed: Parsed, key: tuple[Any, ...]) -> tuple[str, int | None]:
    line = parsed.line_of(key)
    return (f"{path}:{line}" if line else path), line


def _link(path: str, parsed: Parsed, key: tuple[Any, ...], target: Any, kind: str,
          ) -> tuple[list[Linked], list[ConfigProblem]]:
    """Resolve a file named inside a config (relative to the config's folder, then the cwd)."""
    where, line = _where(path, parsed, key)
    if not isinstance(target, str) or not target.strip() or target.strip().lower() == "none":
        return [], []
    target = os.path.expanduser(target.strip())
    # accelerate/transformers open it relative to the launch directory; a job folder usually
    # keeps it next to the YAML, so that is tried first.
    candidates = [target] if os.path.isabs(target) else [
        os.path.join(os.path.dirname(path), target), target]
    for cand in candidates:
        if os.path.isfile(cand):
            return [Linked(os.path.normpath(cand), kind, where)], []
    return [], [ConfigProblem(path, line, f"{'.'.join(map(str, key))} names {target!r}, which "
                              "does not exist (looked next to this file and in the current "
                              "directory); the launch would fail to open it")]


def read_accelerate(path: str, parsed: Parsed) -> ReaderOutput:
    data = parsed.data if isinstance(parsed.data, dict) else {}
    facts, prov = flatten(data, parsed, "config.accelerate", path)
    ds = data.get("deepspeed_config")
    linked: list[Linked] = []
    problems: list[ConfigProblem] = []
    if isinstance(ds, dict) and "deepspeed_config_file" in ds:
        linked, problems = _link(path, parsed, ("deepspeed_config", "deepspeed_config_file"),
                                 ds["deepspeed_config_file"], "deepspeed")
    return ReaderOutput(facts, prov, tuple(problems), tuple(linked))


def read_plain(prefix: str):  # noqa: ANN201 - a reader factory
    def read(path: str, parsed: Parsed) -> ReaderOutput:
        data = parsed.data if isinstance(parsed.data, dict) else {}
        facts, prov = flatten(data, parsed, prefix, path)
        return ReaderOutput(facts, prov)
    return read


def read_lightning(path: str, parsed: Parsed) -> ReaderOutput:
    out = read_plain("config.lightning")(path, parsed)
    trainer = parsed.data.get("trainer") if isinstance(parsed.data, dict) else None
    strategy = trainer.get("strategy") if isinstance(trainer, dict) else None
    if isinstance(strategy, dict) and isinstance(strategy.get("class_path"), str):
        out.facts["config.lightning.trainer.strategy"] = strategy["class_path"]
        out.provenance["config.lightning.trainer.strategy"] = _where(
            path, parsed, ("trainer", "strategy", "class_path"))[0]
    return out


def read_hf_trainer(path: str, parsed: Parsed) -> ReaderOutput:
    out = read_plain("config.hf_trainer")(path, parsed)
    data = parsed.data if isinstance(parsed.data, dict) else {}
    ds = data.get("deepspeed")
    if isinstance(ds, str) and ds.endswith(".json"):
        linked, problems = _link(path, parsed, ("deepspeed",), ds, "deepspeed")
        return ReaderOutput(out.facts, out.provenance, tuple(problems), tuple(linked))
    return out


def read_nemo(path: str, parsed: Parsed) -> ReaderOutput:
    """NeMo 1.x: Hydra/OmegaConf YAML, so ``${model.x}`` / ``${.x}`` are resolved first."""
    data = parsed.data if isinstance(parsed.data, dict) else {}
    facts, prov = flatten(resolve(data, parsed.line_of), parsed, "config.nemo", path)
    return ReaderOutput(facts, prov)


read_deepspeed = read_plain("config.deepspeed")
read_torchtitan = read_plain("config.torchtitan")
