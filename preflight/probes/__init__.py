"""Probes: collect facts about this machine and Python environment; never judge, never raise.

:func:`collect_all` runs each probe through :func:`preflight.probes.base.guarded`, so a probe
that crashes is reported as a ``crashed`` result and the others still run. The child-process
import probe (seconds: it imports torch) runs only when ``deep`` is asked for.
"""

from __future__ import annotations

from preflight.probes.base import ProbeResult, guarded


def collect_all(*, deep: bool = False) -> list[ProbeResult]:
    """Run every probe (gpu, packages, runtime; imports only when ``deep``)."""
    from preflight.probes.gpu import probe_gpu
    from preflight.probes.packages import probe_packages
    from preflight.probes.runtime import probe_runtime

    results = [
        guarded("gpu", probe_gpu, owns=lambda: _registered("gpu.")),
        guarded("packages", probe_packages, owns=_package_facts),
        guarded("runtime", probe_runtime, owns=lambda: _registered("host.")),
    ]
    if deep:
        from preflight.probes.imports import probe_imports

        results.append(guarded("imports", probe_imports))
    return results


def _registered(*prefixes: str) -> list[str]:
    from preflight.facts import registry

    return [n for p in prefixes for n in registry().exact_names(p)]


def _package_facts() -> list[str]:
    """What a crashed packages probe leaves unknown: the versions of every distribution it looks
    for, the TE package-set facts and torch's CUDA build."""
    from preflight.probes.packages import INTERESTING

    return [f"pkg.{d}.version" for d in sorted(INTERESTING)] + _registered("pkg.", "cuda.")
