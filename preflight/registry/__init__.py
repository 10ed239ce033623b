"""The fact-name registry, one module per namespace, and the types that describe it.

Each module holds ``SPECS: tuple[FactSpec, ...]`` for the names its producer emits; the module's
owner (the probe, reader or step that produces those facts) keeps it true. Rules may only name
facts registered here; the rule loader rejects any other name with file and line.
:func:`registry` is the process-wide :class:`Registry` of every namespace's specs. (The specs'
types lived in ``preflight.facts``, which loaded this package back: issue 25 item 3.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import import_module
from typing import Literal

FactType = Literal["bool", "int", "float", "str", "version", "cc", "list", "dict", "any"]
"""Declared type of a fact. ``version`` is a PEP 440-ish string, ``cc`` is "major.minor"."""


@dataclass(frozen=True)
class FactSpec:
    """One registered fact name (or name template) with its type and a one-line doc.

    Templates use ``<segment>`` for exactly one dotted segment and ``<path...>`` for one or more
    segments, e.g. ``pkg.<dist>.version`` or ``config.<kind>.<path...>``.
    """

    name: str
    type: FactType
    doc: str
    choices: tuple[str, ...] = ()
    """A closed vocabulary: the only values a producer emits (``rules lint`` refuses a rule
    comparing the fact with anything else). Empty: open."""

    @property
    def is_template(self) -> bool:
        return "<" in self.name

    def pattern(self) -> re.Pattern[str]:
        """The compiled regex a concrete name must fully match."""
        out = []
        for token in re.split(r"(<[^>]+>)", self.name):
            if token.endswith("...>"):
                out.append(r"[^.]+(?:\.[^.]+)*")
            elif token.startswith("<"):
                out.append(r"[^.]+")
            else:
                out.append(re.escape(token))
        return re.compile("".join(out) + r"\Z")


class Registry:
    """All known fact specs; answers "is this name known, and what type is it"."""

    def __init__(self, specs: tuple[FactSpec, ...]) -> None:
        self._exact: dict[str, FactSpec] = {}
        self._templates: list[tuple[re.Pattern[str], FactSpec]] = []
        for spec in specs:
            if spec.is_template:
                self._templates.append((spec.pattern(), spec))
            else:
                if spec.name in self._exact:
                    raise ValueError(f"fact {spec.name!r} registered twice")
                self._exact[spec.name] = spec

    def lookup(self, name: str) -> FactSpec | None:
        """Return the spec for ``name`` (exact names win over templates), or None."""
        spec = self._exact.get(name)
        if spec is not None:
            return spec
        for pattern, tspec in self._templates:
            if pattern.match(name):
                return tspec
        return None

    def exact_names(self, prefix: str) -> list[str]:
        """Registered exact (non-template) names that start with ``prefix``, sorted."""
        return sorted(n for n in self._exact if n.startswith(prefix))

    def specs(self) -> list[FactSpec]:
        """All specs, exact names first, sorted by name."""
        return sorted(self._exact.values(), key=lambda s: s.name) + sorted(
            (s for _, s in self._templates), key=lambda s: s.name
        )


_NAMESPACES = (
    "host", "gpu", "cuda", "pkg", "imports", "env", "config", "intent", "effective", "smoke",
    "runtime", "cluster",
)


def all_specs() -> tuple[FactSpec, ...]:
    """Every registered spec, from every namespace module."""
    specs: list[FactSpec] = []
    for ns in _NAMESPACES:
        specs.extend(import_module(f"preflight.registry.{ns}").SPECS)
    return tuple(specs)


_REGISTRY: list[Registry] = []


def registry() -> Registry:
    """The process-wide registry, built once from every namespace module."""
    if not _REGISTRY:
        _REGISTRY.append(Registry(all_specs()))
    return _REGISTRY[0]
