"""Truths across the bundled rule files that the per-rule inline tests cannot see.

A rule's ``affected`` range, its condition and its fix must tell one story (issue 23 item 5: a
fix naming another version than the range it repairs).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from packaging.version import Version

RULES = Path(__file__).resolve().parents[2] / "rules"
_FLOOR = re.compile(r"'([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?>=([0-9][^',<]*)'")


def _norm(name: Any) -> str:
    if isinstance(name, dict):
        name = name.get("name", "")
    return re.sub(r"[-_.]+", "-", str(name)).lower()


def _release(text: str) -> tuple[int, ...]:
    release = list(Version(text).release)
    while release and release[-1] == 0:
        release.pop()
    return tuple(release)


def _fixed_versions(rule: dict[str, Any], package: str) -> list[str]:
    out = []
    for entry in rule.get("affected") or []:
        if _norm(entry.get("package")) != package:
            continue
        for rng in entry.get("ranges") or []:
            if isinstance(rng, dict) and "fixed" in rng:
                out.append(str(rng["fixed"]))
    return out


def _rules() -> list[tuple[Path, dict[str, Any]]]:
    found = []
    for path in sorted(RULES.rglob("*.yaml")):
        rule = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(rule, dict) and not rule.get("withdrawn"):
            found.append((path, rule))
    return found


def test_an_upgrade_past_the_fix_names_the_release_that_fixed_it() -> None:
    """A fix command may ask for a later release than the one that fixed the bug (to avoid
    another bug of the next releases), but then its text must name the fixing release, so the
    reader can tell the range from the advice (FP8D-ACC-0021 said 'upgrade to 1.9.0' for a bug
    its range and tests say 1.8.0 fixed)."""
    bad = []
    for path, rule in _rules():
        fix = rule.get("fix")
        if not isinstance(fix, dict):
            continue
        text = str(fix.get("text") or "")
        for command in fix.get("commands") or []:
            for package, floor in _FLOOR.findall(str(command)):
                fixed = _fixed_versions(rule, _norm(package))
                if not fixed or any(_release(floor) == _release(v) for v in fixed):
                    continue
                named = [v for v in fixed
                         if re.search(r"(?<![0-9.])" + re.escape(".".join(map(str, _release(v)))) + r"(?![0-9])",
                                      text)]
                if not named:
                    bad.append(f"{path.name}: installs {package}>={floor}, range fixed in "
                               f"{fixed}, text names neither")
    assert not bad, "\n".join(bad)
