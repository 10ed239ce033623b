"""The fact-name registry, one module per namespace.

Each module holds ``SPECS: tuple[FactSpec, ...]`` for the names its producer emits; the module's
owner (the probe, reader or step that produces those facts) keeps it true. Rules may only name
facts registered here; the rule loader rejects any other name with file and line.
"""

from __future__ import annotations

from importlib import import_module

from preflight.facts import FactSpec

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
