"""Which torch a nightly or source build of a torch extension was built against, as upstream pairs them.

A release of a package with C++/CUDA extensions for torch (torchao, ...) is built against one torch
release, which rules encode as version ranges (torchao 0.12 for torch 2.8). A nightly or a source
build is not: its base version says nothing about the torch it was compiled with.

- A *nightly* (``0.13.0.dev20250827+cu128``) is built by upstream's nightly job against the torch
  nightly of the same day (pytorch/ao's nightly wheels are built with
  ``pip install --pre torch --index-url .../whl/nightly`` of that day, and its README pairs
  ``torchao`` nightlies with ``torch`` nightlies). With a torch nightly of that date the pair is
  matched; with any other torch it cannot be known from the versions (a nearby nightly usually
  works, a release of another minor does not).
- A *source build* (a local label that is not a build flavour, ``0.13.0+git1a2b3c4``; a ``.dev``
  part with no date, ``0.13.0.dev0``) was compiled against whatever torch was installed when it was
  built (or, with pip's build isolation, a torch pip chose): Unknown.
- Anything else is a *release* (pre-releases ``rc1`` included): rules pair it by its version.

The fact ``pkg.<dist>.built_with_torch`` says this for every installed non-release build other
than torch itself: True for a same-day nightly pair, Unknown with the reason otherwise, absent
for a release. A pairing rule adds ``not built_with_torch == true``: quiet for a matched pair,
undetermined where the pairing cannot be known, and a release decides by its range as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from packaging.version import InvalidVersion, Version

from preflight.base.versions import FLAVOUR
from preflight.facts import Unknown

__all__ = ["SUFFIX", "build_kind", "nightly_date", "pairing_facts"]

SUFFIX = ".built_with_torch"
_DATE = re.compile(r"20\d{6}")  # YYYYMMDD: the .dev part of a pip nightly


def _parse(version: Any) -> Version | None:
    if not isinstance(version, str) or len(version) > 200:
        return None
    try:
        return Version(version)
    except (InvalidVersion, ValueError, TypeError):
        return None


def nightly_date(version: Any) -> str | None:
    """``"20250827"`` for a pip nightly ``X.Y.Z.dev20250827[+flavour]``, else None."""
    v = _parse(version)
    if v is None or v.dev is None or (v.local is not None and not FLAVOUR.fullmatch(v.local)):
        return None
    date = str(v.dev)
    return date if _DATE.fullmatch(date) else None


def build_kind(version: Any) -> str | None:
    """``release``, ``nightly`` or ``source`` (see the module docstring); None if unparseable."""
    v = _parse(version)
    if v is None:
        return None
    if nightly_date(version):
        return "nightly"
    if v.dev is not None or (v.local is not None and not FLAVOUR.fullmatch(v.local)):
        return "source"
    return "release"


def _pairing(dist: str, version: str, torch: str) -> bool | Unknown:
    date, kind = nightly_date(version), build_kind(version)
    if date and nightly_date(torch) == date:
        return True
    if kind == "nightly":
        return Unknown(f"{dist} {version} is a nightly, built against the torch nightly of {date}; "
                       f"torch {torch} is not that nightly, so which torch it pairs with cannot be "
                       "known from the versions")
    return Unknown(f"{dist} {version} is a source build, compiled against whatever torch was "
                   f"installed when it was built; whether that was torch {torch} cannot be known "
                   "from the versions")


def pairing_facts(values: Mapping[str, Any]) -> dict[str, Any]:
    """``pkg.<dist>.built_with_torch`` for every non-release ``pkg.<dist>.version`` in ``values``
    (torch itself excepted), when torch's version is known."""
    torch = values.get("pkg.torch.version")
    if not isinstance(torch, str) or build_kind(torch) is None:
        return {}
    out: dict[str, Any] = {}
    for name, version in values.items():
        if not (name.startswith("pkg.") and name.endswith(".version")) or name.count(".") != 2:
            continue
        dist = name[len("pkg."):-len(".version")]
        if not dist or dist == "torch" or build_kind(version) in (None, "release"):
            continue
        out[f"pkg.{dist}{SUFFIX}"] = _pairing(dist, version, torch)
    return out
