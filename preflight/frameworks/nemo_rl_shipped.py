"""NeMo-RL's shipped configs: what the base a recipe names sets, where the job does not hold it.

A NeMo-RL recipe stands on a shipped config (``defaults: ../../grpo_math_1B.yaml``,
``defaults: grpo_math_8B_megatron.yaml``) that a job folder often leaves out, or that lies
outside the files the user named. ``preflight/data/nemo_rl_shipped.json``
(``tools/nemo_rl_shipped.py``) holds, for every top-level ``examples/configs/*.yaml`` and every
file another shipped config names as its base, the settings of
:data:`preflight.frameworks.nemo_rl.BASE_DECIDES` that were the same at every NeMo-RL release
and commit read (v0.4.0 .. v0.7.0 and later commits, listed per file). A setting that changed
between them is not there, so it stays undetermined; so does everything of a base the table does
not know. The file is read only when a NeMo-RL base was not read (never on the static path of a
job that holds its base).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from preflight.facts import Unknown

_DATA = Path(__file__).resolve().parents[1] / "data" / "nemo_rl_shipped.json"


@dataclass(frozen=True)
class Shipped:
    path: str                       # examples/configs/... in NeMo-RL
    values: dict[str, Any]          # BASE_DECIDES key -> value (ABSENT: the file sets none)
    read_at: tuple[str, ...]
    absent: str

    def where(self) -> str:
        first, last = self.read_at[0], self.read_at[-1]
        span = first if first == last else f"{first} .. {last}"
        return (f"NeMo-RL's shipped {self.path} (the same at {span}; the file is not in the "
                "job)")


@cache
def _table() -> tuple[dict[str, Any], str]:
    doc = json.loads(_DATA.read_text("utf-8"))
    return doc["configs"], doc["absent"]


def lookup(target: str) -> Shipped | None:
    """The shipped config ``target`` (a path a ``defaults:`` names, resolved) is: by its path
    from ``examples/configs/`` on, else by its file name where only one shipped config has it."""
    configs, absent = _table()
    norm = os.path.normpath(target).replace(os.sep, "/")
    at = norm.rfind("examples/configs/")
    key: str | None = norm[at:] if at >= 0 else None
    if key is None:
        name = norm.rsplit("/", 1)[-1]
        hits = [k for k in configs if k.rsplit("/", 1)[-1] == name]
        key = hits[0] if len(hits) == 1 else None
    entry = configs.get(key) if key is not None else None
    if not isinstance(entry, dict) or key is None:
        return None
    return Shipped(key, dict(entry["values"]), tuple(entry["read_at"]), absent)


def fill_unread(f: Mapping[str, Any], prov: Mapping[str, str], unread: Unknown, prefix: str,
                keys: Sequence[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The base config was not read: of ``keys``, what the job does not say stays unknown
    (``unread``), except what a base NeMo-RL ships sets alike at every release read (the job's
    ``<prefix>.shipped_base``, :func:`lookup`)."""
    named = f.get(f"{prefix}.shipped_base")
    shipped = lookup(named) if isinstance(named, str) else None
    facts, where = dict(f), dict(prov)
    for key in keys:
        name = f"{prefix}.{key}"
        if name in facts:
            continue
        value = shipped.values.get(key, unread) if shipped is not None else unread
        if shipped is not None and value == shipped.absent:
            continue            # the shipped base does not set it either
        if isinstance(value, str) and value == "${policy.precision}":
            # vllm_cfg.precision follows the policy's precision (the job's, else the base's)
            value = facts.get(f"{prefix}.policy.precision",
                              shipped.values.get("policy.precision", unread)
                              if shipped is not None else unread)
        facts[name] = value
        where[name] = shipped.where() if shipped is not None and not isinstance(
            value, Unknown) else prov.get(f"{prefix}.base_config", "intent")
    return facts, where


def shipped_config(given: tuple[Any, str] | None, facts: dict[str, Any], prov: dict[str, str],
                   prefix: str) -> None:
    """``--config examples/configs/X.yaml`` from a NeMo-RL checkout, not in the job: the job
    stands on NeMo-RL's X (``<prefix>.shipped_base``), whose settings alike at every release read
    :func:`fill_unread` gives (PR 1175's e2e FP8 usage, holdout7). Only a path under
    ``examples/configs/``: a file of the same name elsewhere may be the user's own copy."""
    if given is None or not isinstance(given[0], str) or "examples/configs/" not in given[0] or \
            not isinstance(facts.get(f"{prefix}.base_config"), Unknown):
        return
    shipped = lookup(given[0])
    if shipped is not None:
        facts[f"{prefix}.shipped_base"] = shipped.path
        prov[f"{prefix}.shipped_base"] = given[1]
