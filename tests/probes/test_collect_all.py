"""collect_all: every probe runs, facts are registered and JSON-ready, torch is never imported."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from probe_fakes import assert_registered

from preflight.facts import Facts, Unknown, encode_value
from preflight.probes import collect_all
from preflight.probes.base import ProbeStatus


def test_collect_all_runs_every_static_probe() -> None:
    results = collect_all()
    assert [r.name for r in results] == ["gpu", "packages", "runtime"]
    assert all(r.status is not ProbeStatus.CRASHED for r in results), [r.reason for r in results]
    facts = Facts()
    for r in results:
        assert set(r.provenance) == set(r.facts)
        facts = facts.merged(r.facts, r.provenance, source=r.name)
    assert_registered(facts)
    json.dumps({n: encode_value(v) for n, v in facts.values.items()})
    for name in ("gpu.count", "gpu.source", "pkg.broken", "host.python", "host.shm_bytes"):
        assert name in facts


def test_static_path_never_imports_heavy_frameworks() -> None:
    code = ("import sys; from preflight.probes import collect_all; collect_all(); "
            "print(sorted(m for m in ('torch', 'transformer_engine', 'deepspeed', 'torchao') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stderr


@pytest.mark.slow
def test_deep_adds_the_import_probe() -> None:
    results = collect_all(deep=True)
    assert [r.name for r in results] == ["gpu", "packages", "runtime", "imports"]
    imports = results[-1].facts
    assert_registered(imports)
    for module in ("torch", "transformer_engine", "torchao", "deepspeed"):
        assert isinstance(imports[f"import.{module}.ok"], bool)


def test_a_crashed_probe_leaves_its_facts_unknown_not_absent() -> None:
    """Absent reads as "not installed" to the rules: a crash must make them undetermined."""
    from preflight import engine
    from preflight.probes import _package_facts
    from preflight.probes.base import guarded

    def crash() -> Any:
        raise TypeError("unhashable type: 'list'")

    result = guarded("packages", crash, owns=_package_facts)
    assert result.status is ProbeStatus.CRASHED and "TypeError" in result.reason
    te = result.facts["pkg.transformer-engine.version"]
    assert isinstance(te, Unknown) and "packages probe crashed" in te.reason
    assert isinstance(result.facts["cuda.torch_build"], Unknown)
    assert set(result.provenance) == set(result.facts)

    # An llm-foundry amp_fp8 job: with TE's version unknown, "TE is not installed" (LLMF-0008)
    # must be undetermined, not fire.
    facts = Facts(dict(result.facts)).merged({
        "config.kinds": ["llmfoundry"], "intent.fp8": True, "intent.backend": "te",
        "intent.frameworks": ["llmfoundry"], "config.llmfoundry.precision": "amp_fp8",
        "pkg.llm-foundry.version": "0.21.0"})
    evaluated = engine.evaluate(engine.load_rules(), facts)
    assert "FP8D-LLMF-0008" not in {f.rule_id for f in evaluated.findings}
    assert "FP8D-LLMF-0008" in {u.rule_id for u in evaluated.undetermined}


def test_owned_names_cover_the_probes_namespaces() -> None:
    from preflight.probes import _package_facts, _registered

    gpu = _registered("gpu.")
    assert "gpu.min_cc" in gpu and "gpu.count" in gpu
    pkgs = _package_facts()
    assert "pkg.torch.version" in pkgs and "pkg.te.versions_agree" in pkgs
    assert "cuda.torch_build" in pkgs


def test_static_probes_run_without_process_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 12 item 7: Windows has no os.killpg / os.setsid (simulated; CI is Linux). Every
    # static probe, the NVML child included, still runs and nothing crashes.
    import os

    from preflight.base import proc

    monkeypatch.setattr(proc, "GROUP_KILL", False)
    monkeypatch.delattr(os, "killpg")
    results = collect_all()
    assert [r.name for r in results] == ["gpu", "packages", "runtime"]
    assert all(r.status is not ProbeStatus.CRASHED for r in results), [r.reason for r in results]
