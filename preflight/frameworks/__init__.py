"""The frameworks fp8-doctor reads, one module each, and the one registry that lists them.

Each ``preflight/frameworks/<kind>.py`` exports ``FRAMEWORK`` (a :class:`Framework`): its file
formats, how a file is recognised (a score), how it is read into ``config.<kind>.*`` facts, the
files it names and how the framework resolves them, its defaults, how it derives ``intent.*``
and its precedence. Detection (:func:`detect`), reading (:mod:`preflight.jobs.read`), intent
(:mod:`preflight.intent`), the CLI's ``--kind`` choices and the docs iterate :data:`FRAMEWORKS`.

Adding a framework: write its module, add it to :data:`FRAMEWORKS` (the order breaks ties in
detection), and add its tests under ``tests/frameworks/`` (docs/internals.md walks through one).
"""

from __future__ import annotations

from typing import Any

from preflight.frameworks import (
    accelerate,
    axolotl,
    deepspeed,
    hf_trainer,
    lightning,
    llamafactory,
    llmfoundry,
    mcli,
    megatron,
    nemo,
    swift,
    torchtitan,
)
from preflight.frameworks._record import Default, Derived, Framework, Reference

__all__ = ["BY_KIND", "FORMATS", "FRAMEWORKS", "KINDS", "Default", "Derived", "Framework",
           "Reference", "best_any_format", "detect", "score"]

FRAMEWORKS: tuple[Framework, ...] = (
    accelerate.FRAMEWORK, deepspeed.FRAMEWORK, llmfoundry.FRAMEWORK, torchtitan.FRAMEWORK,
    megatron.FRAMEWORK, lightning.FRAMEWORK, hf_trainer.FRAMEWORK, nemo.FRAMEWORK,
    axolotl.FRAMEWORK, llamafactory.FRAMEWORK, swift.FRAMEWORK, mcli.FRAMEWORK,
)
"""Every framework, in detection order (on equal scores the earlier one is named first)."""

BY_KIND: dict[str, Framework] = {f.kind: f for f in FRAMEWORKS}
KINDS: tuple[str, ...] = tuple(BY_KIND)
FORMATS: dict[str, tuple[str, ...]] = {f.kind: f.formats for f in FRAMEWORKS}


def score(kind: str, data: Any) -> int:
    """How strongly ``data`` (a parsed mapping) looks like a config of ``kind``."""
    return BY_KIND[kind].score(data) if isinstance(data, dict) else 0


def detect(fmt: str, data: Any) -> tuple[str | None, list[tuple[str, int]]]:
    """Best kind for parsed ``data`` of format ``fmt`` (None when nothing or a tie)."""
    scores = sorted(((k, score(k, data)) for k in KINDS if fmt in FORMATS[k]),
                    key=lambda kv: -kv[1])
    scores = [(k, s) for k, s in scores if s > 0]
    if not scores:
        return None, []
    if len(scores) > 1 and scores[1][1] == scores[0][1]:
        return None, scores
    return scores[0][0], scores


def best_any_format(data: Any) -> str | None:
    """The kind ``data`` looks most like, whatever format it came in (for wrong-kind checks)."""
    best = max(KINDS, key=lambda k: score(k, data))
    return best if score(best, data) > 0 else None
