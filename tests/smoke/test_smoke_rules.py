"""rules/smoke/*.yaml: every fact they name is a registered smoke/intent fact, each rule has
firing and quiet tests, and (when the engine is present) their own tests pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from preflight.registry import registry

RULES = sorted((Path(__file__).parents[2] / "rules" / "smoke").glob("*.yaml"))


def _leaves(cond: Any) -> list[dict]:
    if isinstance(cond, dict) and "fact" in cond:
        return [cond]
    if isinstance(cond, dict):
        return [leaf for v in cond.values() for leaf in _leaves(v)]
    if isinstance(cond, list):
        return [leaf for v in cond for leaf in _leaves(v)]
    return []


def test_there_are_smoke_rules() -> None:
    assert len(RULES) >= 12


@pytest.mark.parametrize("path", RULES, ids=lambda p: p.stem)
def test_rule_shape(path: Path) -> None:
    rule = yaml.safe_load(path.read_text())
    assert rule["id"] == path.stem
    assert rule["severity"] in ("error", "warning", "info")
    assert rule["confidence"] in ("verified", "measured", "stated", "inferred")
    if rule["confidence"] == "measured":   # established on hardware: which device, and when
        assert rule["measured"]["device"] and rule["measured"]["date"]
    assert rule["references"] and all(r["url"].startswith("https://") for r in rule["references"])
    reg = registry()
    for leaf in _leaves(rule["when"]):
        assert reg.lookup(leaf["fact"]), leaf["fact"]
    expects = {t["expect"] for t in rule["tests"]}
    assert {"fire", "quiet"} <= expects
    for t in rule["tests"]:
        for name in t["facts"]:
            assert reg.lookup(name), name


def test_engine_runs_the_rules_own_tests() -> None:
    from preflight.engine import load_rules

    ruleset = load_rules([str(RULES[0].parent)])
    assert len(ruleset) == len(RULES)
