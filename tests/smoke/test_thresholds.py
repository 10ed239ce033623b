"""The smoke verdict is stated once (preflight/registry/smoke_verdict.py, issue 25 item 2): the SMOKE
rules' numbers, the child's own judgements (numerics.engaged / accurate) and the report's table
(smoke/verdict.py) all agree with it. The rules are YAML data, so this reads the rule files."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from preflight.registry import smoke_verdict as th
from preflight.registry.smoke_verdict import FAIL, PASS, smoke_checks
from preflight.smoke import numerics as nm

RULES = Path(__file__).resolve().parents[2] / "rules" / "smoke"
ORDERED = {"lt", "le", "gt", "ge"}


def _leaves(cond: Any) -> Iterator[dict[str, Any]]:
    if isinstance(cond, dict):
        if "fact" in cond:
            yield cond
        for key in ("all", "any", "not"):
            if key in cond:
                yield from _leaves(cond[key])
    elif isinstance(cond, list):
        for item in cond:
            yield from _leaves(item)


def _numeric_leaves() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(RULES.glob("*.yaml")):
        rule = yaml.safe_load(path.read_text(encoding="utf-8"))
        out += [(rule["id"], leaf) for leaf in _leaves(rule["when"])
                if leaf.get("op") in ORDERED]
    return out


def _checks_by_fact() -> dict[str, th.Check]:
    return {f"smoke.{c.group}.{c.field}": c
            for c in (*th.BOOL_CHECKS, *th.SQNR_CHECKS, *th.SPEED_CHECKS)}


def test_every_threshold_a_smoke_rule_states_is_the_one_in_thresholds() -> None:
    checks = _checks_by_fact()
    judged = [(rid, leaf) for rid, leaf in _numeric_leaves() if leaf["fact"] in checks]
    assert judged, "no SMOKE rule compares a measured value (the rule files moved?)"
    for rid, leaf in judged:
        band = checks[leaf["fact"]].band
        assert band is not None, (rid, leaf)
        # A rule fires below a floor (lt lo) or above a ceiling (gt hi): the band's own bound.
        if leaf["op"] in ("lt", "le"):
            assert leaf["value"] == band.lo, (rid, leaf, band)
        else:
            assert leaf["value"] == band.hi, (rid, leaf, band)


def test_every_speed_floor_has_its_rule() -> None:
    stated = {leaf["fact"]: leaf["value"] for _, leaf in _numeric_leaves()}
    for c in th.SPEED_CHECKS:
        assert c.band is not None
        assert stated.get(f"smoke.speed.{c.field}") == c.band.lo, c


@given(st.floats(min_value=-50, max_value=150, allow_nan=False))
def test_the_childs_judgement_and_the_table_agree(db: float) -> None:
    # numerics.engaged / accurate decide smoke.<backend>.engaged / accurate in the child; the
    # forward-SQNR row of the table must say pass exactly when both hold.
    row = next(c for c in smoke_checks({"smoke.scaled_mm.sqnr_db": db}) if "forward" in c.name)
    assert (row.verdict == PASS) == (nm.engaged(db) and nm.accurate(db))
    grad = next(c for c in smoke_checks({"smoke.te.xgrad_sqnr_db": db}) if "input-grad" in c.name)
    assert (grad.verdict == PASS) == nm.accurate(db, nm.GRAD_SQNR_MIN_DB)


@given(st.floats(min_value=0, max_value=4, allow_nan=False))
def test_speed_rows_fail_exactly_where_the_rules_fire(ratio: float) -> None:
    facts = {"smoke.speed.job_speedup_min": ratio, "smoke.speed.ref_speedup": ratio}
    rows = {c.name: c.verdict for c in smoke_checks(facts)}
    for c in th.SPEED_CHECKS:
        assert c.band is not None and c.band.lo is not None
        assert rows[c.what] == (FAIL if ratio < c.band.lo else PASS)


def test_nan_is_never_inside_a_band() -> None:
    assert not th.FWD_BAND.holds(math.nan)
    assert not nm.engaged(math.nan) and not nm.accurate(math.nan)
