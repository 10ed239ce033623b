"""Built-in findings for ``--deep``: an import of the training stack that crashes or hangs.

Issue 13 item 4: with ``--deep``, ``import torch`` killed by a signal or never finishing showed
only as ``import.torch.*`` facts in the JSON, with no finding and no effect on the exit code. The
job itself would die or hang at that import, so it is an error here. Transformer Engine's other
import failures have their own rules (FP8D-TE-0010 ABI mismatch, FP8D-TE-0011 the rest), so only
its hang is reported here; a module that is not installed is not a failure (the packages probe
and the rules say whether the job needs it).
"""

from __future__ import annotations

from typing import Any

from preflight.builtin_findings import BUILTIN
from preflight.findings import Evidence, Finding, Fix
from preflight.probes.base import ProbeResult

RULE_ID = "FP8D-IMPORT-FAIL"   # defined in preflight.builtin_findings
# error_kind values the bundled rules already turn into findings, per module.
_RULED: dict[str, frozenset[str]] = {
    "transformer_engine": frozenset({"abi_undefined_symbol", "missing_library",
                                     "version_mismatch", "broken_install",
                                     "missing_dependency", "crash", "other"}),
}
_NOT_A_FAILURE = frozenset({"not_installed"})


def import_failures(result: ProbeResult) -> list[Finding]:
    """One ERROR finding per module whose import crashed, hung or failed (see module doc)."""
    if result.name != "imports":
        return []
    facts = result.facts
    modules = sorted({n.split(".")[1] for n in facts if n.startswith("import.")
                      and n.endswith(".ok")})
    out: list[Finding] = []
    for module in modules:
        p = f"import.{module}"
        if facts.get(f"{p}.ok") is not False:
            continue
        kind = facts.get(f"{p}.error_kind")
        kind_s = kind if isinstance(kind, str) else "unknown"
        if kind_s in _NOT_A_FAILURE or kind_s in _RULED.get(module, frozenset()):
            continue
        out.append(_finding(module, kind_s, facts.get(f"{p}.error", ""), facts))
    return out


def _finding(module: str, kind: str, error: Any, facts: Any) -> Finding:
    what = {"crash": "crashed the interpreter", "timeout": "did not finish (hung)"}.get(
        kind, "failed")
    p = f"import.{module}"
    evidence = tuple(Evidence(n, facts[n], "import-probe")
                     for n in (f"{p}.ok", f"{p}.error_kind", f"{p}.error") if n in facts)
    return BUILTIN[RULE_ID].make(
        f"fp8-doctor --deep imported {module} in a child Python the way the training "
        f"job will: it {what} ({kind}): {error}. The job would stop at the same import.",
        Fix(f"Run `python -c 'import {module}'` in the job's environment to see the whole "
            "error; reinstall the package (and its CUDA libraries) built for this torch / "
            "CUDA, or remove the variable or path that breaks it."),
        detail=f"`import {module}` {what} in a child process",
        evidence=evidence,
        tags=("deep", "import"),
    )
