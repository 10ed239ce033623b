"""Probes: collect facts about this machine and Python environment; never judge, never raise.

:func:`collect_all` runs each probe through :func:`preflight.probes.base.guarded`, so a probe
that crashes is reported as a ``crashed`` result and the others still run. The child-process
import probe (seconds: it imports torch) runs only when ``deep`` is asked for.
"""

from __future__ import annotations

from preflight.probes.base import ProbeResult, guarded


def collect_all(*, deep: bool = False) -> list[ProbeResult]:
    """Run every probe (gpu, packages, runtime; imports only when ``deep``).

    The NVML part of the gpu probe runs in a child process (:mod:`preflight.probes.nvml`).
    """
    from preflight.probes.nvml import start_nvml

    # NVML runs in a child (a native crash there must not end the run). It is started before
    # anything else is imported, so its start-up overlaps those imports and the in-process
    # probes (a driverless machine's child needs ~40 ms of wall time, about what they take).
    # probe_gpu collects (and reaps) it.
    nvml = start_nvml()
    from preflight.probes.gpu import probe_gpu
    from preflight.probes.packages import probe_packages
    from preflight.probes.runtime import probe_runtime

    try:
        later = [
            guarded("packages", probe_packages, owns=_package_facts),
            guarded("runtime", probe_runtime, owns=lambda: _registered("host.")),
        ]
    except BaseException:  # Ctrl-C: leave no NVML child behind
        from preflight.base import proc

        if isinstance(nvml, proc.Child):
            if nvml.proc is not None:
                proc.kill_group(nvml.proc)
            proc.collect(nvml)
        raise
    results = [guarded("gpu", lambda: probe_gpu(nvml_started=nvml),
                       owns=lambda: _registered("gpu.")), *later]
    if deep:
        from preflight.probes.imports import probe_imports

        results.append(guarded("imports", probe_imports))
    return results


def _registered(*prefixes: str) -> list[str]:
    from preflight.registry import registry

    return [n for p in prefixes for n in registry().exact_names(p)]


def _package_facts() -> list[str]:
    """What a crashed packages probe leaves unknown: the versions of every distribution it looks
    for, the TE package-set facts and torch's CUDA build."""
    from preflight.probes.packages import INTERESTING

    return [f"pkg.{d}.version" for d in sorted(INTERESTING)] + _registered("pkg.", "cuda.")
