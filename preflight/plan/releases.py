"""The release lists the upgrade plan picks from (``preflight/data/releases.json``, shipped; no
network at run time) and the candidate versions for one package: the real releases next to the
bounds the firing rules name. The search that tries them is :mod:`preflight.plan.search`.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from preflight.base.versions import comparison_key
from preflight.plan.requires import Table


@dataclass(frozen=True)
class Releases:
    """The shipped release lists: ``packages[name]`` newest first, when they were made, and
    ``requires[name][version]``: the release's requirements on the other packages (None: not
    recorded, so installability cannot be checked)."""

    generated: str
    source: str
    packages: Mapping[str, tuple[str, ...]]
    requires: Table | None = None

    def age_days(self, today: dt.date | None = None) -> int | None:
        try:
            made = dt.date.fromisoformat(self.generated)
        except ValueError:
            return None
        return ((today or dt.date.today()) - made).days


@lru_cache(maxsize=1)
def shipped_releases() -> Releases:
    """``preflight/data/releases.json`` as :class:`Releases` (empty, dated "missing", when the
    file is gone or broken: the plan then says no release is known rather than crashing)."""
    try:
        text = resources.files("preflight").joinpath("data/releases.json").read_text("utf-8")
        doc = json.loads(text)
    except (OSError, ValueError):
        return Releases("missing", "preflight/data/releases.json could not be read", {})
    return releases_from(doc if isinstance(doc, Mapping) else {})


def releases_from(doc: Mapping[str, Any]) -> Releases:
    packages = {str(k): tuple(str(v) for v in vs) for k, vs in (doc.get("packages") or {}).items()
                if isinstance(vs, list)}
    raw = doc.get("requires")
    requires = {str(p): {str(v): tuple(str(r) for r in rs) for v, rs in vs.items()
                         if isinstance(rs, list)}
                for p, vs in raw.items() if isinstance(vs, Mapping)} \
        if isinstance(raw, Mapping) else None
    return Releases(str(doc.get("generated", "unknown")), str(doc.get("source", "")), packages,
                    requires)


def candidates(package: str, current: str, named: Iterable[str],
               releases: Releases, *, downgrades: bool = False) -> list[str]:
    """Real releases next to each named bound (the first at or above it, the last below it) and
    the newest release, nearest to ``current`` first, upgrades before downgrades.

    Downgrades only when asked: an older release "clears" a rule about a bug it predates
    because it predates the feature too (accelerate 0.33 has no FP8 under DeepSpeed at all)."""
    keyed = sorted((k, v) for v in releases.packages.get(package, ())
                   if (k := comparison_key(v)) is not None)
    now = comparison_key(current)
    if not keyed or now is None:
        return []
    picked: set[str] = {keyed[-1][1]}
    for bound in named:
        b = comparison_key(bound)
        if b is None:
            continue
        above = [v for k, v in keyed if k >= b]
        below = [v for k, v in keyed if k < b]
        if above:
            picked.add(above[0])
        if below:
            picked.add(below[-1])
    order = {v: i for i, (_, v) in enumerate(keyed)}
    key_of = dict((v, k) for k, v in keyed)     # every picked version is one of the releases
    here = next((i for i, (k, _) in enumerate(keyed) if k >= now), len(keyed))
    out = [v for v in picked if key_of[v] != now and (downgrades or key_of[v] > now)]
    return sorted(out, key=lambda v: (key_of[v] < now, abs(order[v] - here)))


def with_label(version: str, current: str) -> str:
    """Keep the installed build label (``+cu124``): the plan changes the release, not the
    CUDA build, unless a rule says otherwise (then that rule stays a finding)."""
    label = current.partition("+")[2]
    return f"{version}+{label}" if label and "+" not in version else version
