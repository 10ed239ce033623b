"""The frameworks fp8-doctor reads, one module each, and the one registry that lists them.

Each ``preflight/frameworks/<kind>.py`` exports ``FRAMEWORK`` (a :class:`Framework`): its file
formats, how a file is recognised (a score), how it is read into ``config.<kind>.*`` facts, the
files it names and how the framework resolves them, its defaults, how it derives ``intent.*``
and its precedence. Detection (:func:`detect`), reading (:mod:`preflight.jobs.read`), intent
(:mod:`preflight.intent`), the CLI's ``--kind`` choices and the docs iterate :data:`FRAMEWORKS`.

Adding a framework: write its module, add its kind to :data:`KINDS` (the order breaks ties in
detection), run ``python -m preflight.frameworks._index`` (the distributions every check probes,
without importing the readers), and add its tests under ``tests/frameworks/``
(docs/internals.md walks through one). Nothing outside this package names a framework
(tests/frameworks/test_one_module.py).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from preflight.frameworks._record import Default, Derived, Framework, Reference

    # the types of the names __getattr__ builds on first use: declared, so that a type checker
    # does not depend on the order it meets the import cycles through this package in
    FRAMEWORKS: tuple[Framework, ...]
    BY_KIND: dict[str, Framework]
    FORMATS: dict[str, tuple[str, ...]]

__all__ = ["BY_KIND", "FORMATS", "FRAMEWORKS", "KINDS", "Default", "Derived", "Framework",
           "Reference", "best_any_format", "detect", "rule_areas", "score"]

KINDS: tuple[str, ...] = (
    "accelerate", "deepspeed", "llmfoundry", "torchtitan", "megatron", "lightning", "hf_trainer",
    "nemo", "axolotl", "llamafactory", "swift", "mcli", "pytorch", "trl", "megatron_bridge",
    "verl", "nemo_rl", "automodel", "slime", "skyrl", "nemo2", "openrlhf", "areal",
    "torchtune",
    "roll",
    "arctic_training",
    "unsloth",
    "olmo_core",
    "cosmos_rl",
    "xtuner",
    "colossalai",
    "prime_rl",
    "gpt_neox",
    "flagscale",
    "soup",
    "rl2",
    "simpletuner",
    "diffsynth",
    "nemo_launcher",
    "easyr1",
    "chatlearn",
    "cloudai",
    "finetrainers",
    "primus",
    "bionemo_evo2",
    "ai_toolkit",
    "diffusion_pipe",
)
"""Every framework's kind, which is its module's name, in detection order (on equal scores the
earlier one is named first). The modules are imported on first use of :data:`FRAMEWORKS`,
:data:`BY_KIND` or :data:`FORMATS`: a check with no job config, and ``--help``, load none of
the readers (a test holds KINDS and the records in step)."""


@lru_cache(maxsize=1)
def _registry() -> dict[str, Any]:
    frameworks: tuple[Framework, ...] = tuple(
        import_module(f"preflight.frameworks.{kind}").FRAMEWORK for kind in KINDS)
    return {"FRAMEWORKS": frameworks, "BY_KIND": {f.kind: f for f in frameworks},
            "FORMATS": {f.kind: f.formats for f in frameworks}}


def __getattr__(name: str) -> Any:
    """``FRAMEWORKS`` (every :class:`Framework`, in detection order), ``BY_KIND`` and
    ``FORMATS`` (the file formats of each kind), built on first use; the record types too
    (``intent`` imports ``frameworks._derived`` on every check, ``--kind`` reads KINDS: neither
    needs the records and the reading kit they import, ~6 ms; issue 26 item 4)."""
    if name in ("FRAMEWORKS", "BY_KIND", "FORMATS"):
        return _registry()[name]
    if name in ("Default", "Derived", "Framework", "Reference"):
        from preflight.frameworks import _record

        return getattr(_record, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def score(kind: str, data: Any) -> int:
    """How strongly ``data`` (a parsed mapping) looks like a config of ``kind``."""
    return _registry()["BY_KIND"][kind].score(data) if isinstance(data, dict) else 0


def detect(fmt: str, data: Any) -> tuple[str | None, list[tuple[str, int]]]:
    """Best kind for parsed ``data`` of format ``fmt`` (None when nothing or a tie)."""
    formats = _registry()["FORMATS"]
    scores = sorted(((k, score(k, data)) for k in KINDS if fmt in formats[k]),
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


def rule_areas() -> dict[str, str]:
    """The ``AREA`` of each framework's rule ids and the heading of its rules in docs/rules.md
    (its record's ``rule_area`` and ``area_title``), for ``rules lint`` and the catalogue."""
    return {f.rule_area: f.area_title or f.title for f in _registry()["FRAMEWORKS"]
            if f.rule_area}
