"""End-to-end scenarios: a planned or replayed environment plus real config files -> exact rule ids.

Each folder ``tests/scenarios/<name>/`` holding a ``scenario.yaml`` is one scenario::

    description: what the setup is and why these rules fire
    snapshot: ../_envs/h100.json      # optional; relative to the folder (shared envs live in _envs/)
    assume: {pkg.accelerate: "1.2.1"} # optional; passed as --assume KEY=VALUE
    paths: [accelerate.yaml, ds.json] # config files in the folder
    expect: [FP8D-ACC-0001]           # the EXACT set of finding ids that must fire ([] = healthy)

The whole pipeline runs (config readers, intent, engine, bundled rules) through
``preflight.check(paths, smoke=False, assume=..., snapshot=...)``; nothing is faked. The set of
fired ids must match exactly -- a rule that starts firing on a healthy setup is a false alarm and
fails here. Scenarios should pin every fact they rely on (a snapshot, plus ``assume``) so the
machine running the tests cannot leak into the result (with no snapshot the real probes run: e.g.
torch 2.13.0 and torchao 0.18.0 are installed on CI and no GPU is visible).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import preflight

HERE = Path(__file__).resolve().parent
SCENARIOS = sorted(p.parent for p in HERE.glob("*/scenario.yaml"))
ALLOWED_KEYS = {"description", "snapshot", "assume", "paths", "expect"}


def _load(folder: Path) -> dict[str, Any]:
    doc = yaml.safe_load((folder / "scenario.yaml").read_text(encoding="utf-8"))
    assert isinstance(doc, dict), f"{folder.name}/scenario.yaml: not a mapping"
    unknown = set(doc) - ALLOWED_KEYS
    assert not unknown, f"{folder.name}/scenario.yaml: unknown keys {sorted(unknown)}"
    assert isinstance(doc.get("description"), str) and doc["description"].strip(), \
        f"{folder.name}: a scenario needs a description"
    assert isinstance(doc.get("expect"), list), f"{folder.name}: expect must be a list of rule ids"
    return doc


def _run(folder: Path, doc: dict[str, Any]) -> preflight.Report:
    paths = [str(folder / p) for p in doc.get("paths") or []]
    for p in paths:
        assert Path(p).exists(), f"{folder.name}: config file {p} is missing"
    snapshot = doc.get("snapshot")
    assume = {str(k): str(v) for k, v in (doc.get("assume") or {}).items()}
    return preflight.check(
        paths,
        smoke=False,
        assume=assume or None,
        snapshot=str((folder / snapshot).resolve()) if snapshot else None,
    )


def test_there_are_enough_scenarios() -> None:
    # The knowledge base promises >= 20 end-to-end scenarios, healthy ones included.
    assert len(SCENARIOS) >= 20, [p.name for p in SCENARIOS]
    healthy = [p.name for p in SCENARIOS if not _load(p)["expect"]]
    assert len(healthy) >= 3, healthy


# Findings the pipeline raises outside the rule base (see preflight/api.py).
PIPELINE_IDS = {"FP8D-CFG-UNREADABLE", "FP8D-PROBE-CRASH", "FP8D-CFG-RUNTIME-ARGS",
                "FP8D-CFG-EMPTY-ASSUMED"}


def test_expected_ids_name_real_rules() -> None:
    # A renamed or withdrawn rule must not leave a scenario expecting an id that can never fire.
    from preflight.engine import load_rules

    known = {r.id for r in load_rules()} | PIPELINE_IDS
    stale = {p.name: sorted(set(_load(p)["expect"]) - known) for p in SCENARIOS}
    assert not {k: v for k, v in stale.items() if v}, stale


@pytest.mark.parametrize("folder", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_scenario(folder: Path) -> None:
    doc = _load(folder)
    report = _run(folder, doc)
    fired = sorted({f.rule_id for f in report.findings})
    expected = sorted(set(doc["expect"]))
    detail = "\n".join(f"  {f.rule_id} [{f.severity.value}] {f.message[:160]}"
                       for f in report.sorted_findings())
    assert fired == expected, (
        f"{folder.name}: {doc['description'].strip()}\n"
        f"expected {expected}\nfired    {fired}\nfindings:\n{detail}"
    )
