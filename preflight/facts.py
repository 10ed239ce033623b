"""Facts: the one mapping every rule sees, plus ``Unknown`` and how values are encoded in JSON.

A fact is a flat dotted name (``gpu.min_cc``, ``pkg.torch.version``) bound to a JSON-serializable
value, or to ``Unknown(reason)`` when a probe could not tell. A name that is *absent* from the
mapping means "does not exist here" (a package not installed, a config key not set); a name bound
to ``Unknown`` means "could not be determined". Rules treat the two differently: the first is a
plain answer, the second makes a rule *undetermined*.

Every name must match a spec in the registry (``preflight.registry``, which also holds the spec
types), so a typo in a rule or a probe is caught at load time rather than silently never
matching.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_NESTING = 64
"""Deepest nesting of lists / mappings fp8-doctor accepts in a config or a fact value (real rule
files are about 12 deep, configs fewer than 20). Deeper input is refused before anything
recursive walks it: see preflight.base.yamlsafe.MAX_DEPTH and preflight.snapshot."""


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "bool": (bool,), "int": (int,), "float": (int, float), "str": (str,), "version": (str,),
    "cc": (str,), "list": (list,), "dict": (dict,),
}


def value_fits(value: Any, ftype: str) -> bool:
    """Whether a (known) value has the JSON shape of a registered fact type (``any``: always).

    ``bool`` is not an ``int`` here, although Python says it is: ``gpu.count: true`` is wrong.
    """
    types = _PY_TYPES.get(ftype)
    if types is None:
        return True
    if isinstance(value, bool) and ftype != "bool":
        return False
    return isinstance(value, types)


@dataclass(frozen=True)
class Unknown:
    """A fact that a probe could not determine, with the reason why."""

    reason: str

    def __post_init__(self) -> None:
        # a reason quotes values the job wrote (`mixed_precision 'QQ...'`): a 10,000-character
        # launch value was repeated in every report line and undetermined rule (redteam12);
        # each unbroken run of more than MAX_QUOTED characters keeps its head and "..."
        if isinstance(self.reason, str) and len(self.reason) > MAX_QUOTED:
            object.__setattr__(self, "reason", _LONG_RUN.sub(
                lambda m: m.group(0)[:MAX_QUOTED] + "...", self.reason))

    def __str__(self) -> str:
        return f"unknown ({self.reason})"


MAX_QUOTED = 200
"""The longest unbroken run (no whitespace) an Unknown reason keeps."""
_LONG_RUN = re.compile(r"\S{%d,}" % (MAX_QUOTED + 1))


def reason_head(reason: str) -> str:
    """The first clause of an Unknown reason, a one-word source tag kept ("NVML: NVML library
    (libnvidia-ml.so.1) not found", "deepspeed is not installed here"): what lists of reasons
    show, the whole reason being given once where the fact is (issue 24 item 5)."""
    parts = reason.split("; ", 1)[0].split(": ")
    return ": ".join(parts[:2]) if len(parts) > 1 and " " not in parts[0] else parts[0]


FactValue = Any  # JSON scalar / list / dict, or Unknown


@dataclass(frozen=True)
class Facts(Mapping[str, FactValue]):
    """An immutable mapping of fact name -> value, with provenance per fact.

    ``provenance[name]`` says where a value came from: a probe name (``nvml``,
    ``importlib.metadata``), a config location (``/job/ds.json:12``), ``assume`` or ``snapshot``.
    """

    # The field is named `values` on purpose (the rules' view of the facts); it shadows
    # Mapping.values(), which nothing here calls.
    values: Mapping[str, FactValue] = field(default_factory=dict)  # type: ignore[assignment]
    provenance: Mapping[str, str] = field(default_factory=dict)

    def __getitem__(self, name: str) -> FactValue:
        return self.values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def source(self, name: str) -> str | None:
        """Where the fact came from, or None."""
        return self.provenance.get(name)

    def merged(self, other: Mapping[str, FactValue], provenance: Mapping[str, str] | None = None,
               *, source: str | None = None) -> Facts:
        """A new Facts with ``other`` layered on top (later layers win)."""
        values = dict(self.values)
        values.update(other)
        prov = dict(self.provenance)
        for name in other:
            if provenance and name in provenance:
                prov[name] = provenance[name]
            elif source is not None:
                prov[name] = source
        return Facts(values, prov)



# --- JSON (de)serialization -------------------------------------------------------------------

def encode_value(value: FactValue) -> Any:
    """A JSON-ready form of a fact value; Unknown becomes ``{"$unknown": reason}``."""
    if isinstance(value, Unknown):
        return {"$unknown": value.reason}
    return value


def decode_value(raw: Any) -> FactValue:
    """Inverse of :func:`encode_value`."""
    if isinstance(raw, dict) and set(raw) == {"$unknown"}:
        return Unknown(str(raw["$unknown"]))
    return raw


def facts_to_json(facts: Facts) -> dict[str, Any]:
    """The ``facts`` + ``provenance`` part of a snapshot, names sorted for stable diffs."""
    return {
        "facts": {n: encode_value(facts.values[n]) for n in sorted(facts.values)},
        "provenance": {n: facts.provenance[n] for n in sorted(facts.provenance)},
    }
