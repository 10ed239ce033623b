"""What one framework says about the job's intent: a frozen record, built through a typed API.

Each framework's ``derive`` (``preflight/frameworks/<kind>.py``) fills an :class:`IntentOut` and
hands :mod:`preflight.intent` the frozen :class:`Derived` it builds. The names a framework may
state are the closed set :data:`Name` (``intent.<name>`` facts of the registry, plus the few
internal inputs of the GEMM shapes): mypy refuses any other literal, and :meth:`IntentOut.__setitem__`
refuses at run time a name built at run time that is not one of them, so a misspelt name can
never become a fact nobody reads (issue 25 item 5). What used to travel as magic keys in the
same dict (``default.<name>``, ``overrides_fp8``, ``survives_override``, ``runs_on``) are fields
of their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Union, get_args

from preflight.facts import Unknown

__all__ = ["COMPUTED", "INTERNAL", "NAMES", "Derived", "IntentOut", "Internal", "Name",
           "Sourced", "Stated", "Value"]

Stated = Literal[
    "fp8", "backend", "recipe", "format", "precision", "distributed", "zero_stage",
    "activation_checkpointing", "recompute_granularity", "compile", "num_gpus",
    "shapes.hidden", "shapes.ffn", "shapes.tokens", "tp", "cp", "sequence_parallel",
    "fp8_attention", "cuda_graphs", "fp8_params", "tp_comm_overlap", "seq_len", "micro_batch",
    "packing", "pad_multiple", "moe.experts", "moe.top_k", "ep", "recipe_by_backend",
    "block_scales_fp32", "rollout.engine", "rollout.fp8", "rollout.recipe",
    "rollout.kv_cache_fp8", "rollout.kv_cache_format", "rollout.is_correction", "fsdp_shard_size",
    "te_modules", "fp8_weight_storage", "fp8_scope"]
"""``intent.<name>`` facts a framework states (tests/frameworks/test_derived.py: every one is in
the fact registry, and every registered intent name is either here or in :data:`COMPUTED`)."""

Internal = Literal["shapes.tp", "shapes.sp", "shapes.qkv_out", "shapes.proj_in",
                   "shapes.fc1_out", "shapes.modules_align"]
"""Inputs of ``intent.shapes.gemms`` that are never facts themselves: the tensor-parallel size
dividing the GEMMs, Megatron / NeMo sequence parallelism (tokens per rank), and the widths of
grouped-query attention and a gated MLP; ``shapes.modules_align`` is ``shapes.dims_align`` from
the sizes of the modules a script builds (:mod:`preflight.frameworks.pytorch_te`), used where
hidden and FFN sizes are not known."""

Name = Union[Stated, Internal]

COMPUTED = frozenset({"fp8_source", "fp8_overridden_by", "frameworks", "stack", "shapes.gemms",
                      "shapes.dims_align", "shapes.tokens_align", "fsdp_shards"})
"""``intent.<name>`` facts :mod:`preflight.intent` computes from what the frameworks state."""

INTERNAL: frozenset[str] = frozenset(get_args(Internal))
NAMES: frozenset[str] = frozenset(get_args(Stated)) | INTERNAL

Value = Union[bool, int, float, str, list[Any], Unknown, None]
"""An intent value as a framework states it (``None``: a reader's value that was not a size)."""

Sourced = tuple[Value, str]
"""``(value, source)``: source is ``file:line`` or a phrase naming the framework default that
decided it."""


@dataclass(frozen=True)
class Derived:
    """One framework's statement about intent, as :mod:`preflight.intent` combines it."""

    values: Mapping[str, Sourced] = field(default_factory=lambda: MappingProxyType({}))
    """Values it states (keys in :data:`NAMES`): the first framework by ``precedence`` wins."""
    defaults: Mapping[str, Sourced] = field(default_factory=lambda: MappingProxyType({}))
    """Values from its defaults (keys in :data:`Stated`): used only where no framework states
    the value (HF Trainer's ``torch_compile=False`` loses to accelerate's dynamo backend)."""
    overrides_fp8: Sourced | None = None
    """Its explicit precision replaces FP8 asked for by a kind in its record's ``cancels_fp8_of``
    (value ``True``, or ``Unknown`` when whether it is set is not known)."""
    survives_override: Sourced | None = None
    """The backend that still converts after another framework replaced its precision
    (accelerate >= 1.9 with the TE backend ``accelerate launch`` exports), or ``Unknown``."""
    runs_on: tuple[str, ...] = ()
    """Kinds this job runs it on, beyond its record's ``runs_on`` (a DeepSpeed config under the
    HF Trainer, ms-swift's Megatron path)."""


def _check(name: str) -> None:
    if name not in NAMES:
        raise ValueError(f"intent.{name} is not an intent name a framework states (see "
                         "preflight/frameworks/_derived.py: Stated, Internal)")


class IntentOut:
    """The builder a ``derive`` fills: ``out["fp8"] = (True, src)``, ``out.default(...)``,
    ``out.overrides_fp8 = ...``, ``out.runs_on = (...)``; :meth:`build` freezes it."""

    __slots__ = ("_defaults", "_values", "overrides_fp8", "runs_on", "survives_override")

    def __init__(self) -> None:
        self._values: dict[str, Sourced] = {}
        self._defaults: dict[str, Sourced] = {}
        self.overrides_fp8: Sourced | None = None
        self.survives_override: Sourced | None = None
        self.runs_on: tuple[str, ...] = ()

    def __setitem__(self, name: Name, value: Sourced) -> None:
        _check(name)
        self._values[name] = value

    def __getitem__(self, name: Name) -> Sourced:
        return self._values[name]

    def __contains__(self, name: Name) -> bool:
        return name in self._values

    def get(self, name: Name, default: tuple[Any, ...]) -> tuple[Any, ...]:
        """The ``(value, source)`` stated for ``name``, else ``default`` (``out.get("tp",
        (1,))[0]``)."""
        return self._values.get(name, default)

    def discard(self, name: Name) -> None:
        """Take back a value stated earlier (a later setting decides it elsewhere)."""
        self._values.pop(name, None)

    def default(self, name: Stated, value: Sourced) -> None:
        """A value from the framework's defaults: counts only where no framework states one."""
        _check(name)
        self._defaults[name] = value

    def build(self) -> Derived:
        return Derived(MappingProxyType(dict(self._values)),
                       MappingProxyType(dict(self._defaults)), self.overrides_fp8,
                       self.survives_override, tuple(self.runs_on))
