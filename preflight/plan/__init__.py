"""The upgrade plan (``fp8-doctor plan``): the search is :mod:`.search`, the release lists and
candidate versions :mod:`.releases`, installability :mod:`.requires`, the API call :mod:`.run`, the output :mod:`.render`; the command is
:mod:`preflight.commands.plan`.

The names of :mod:`.search` and :mod:`.releases` are re-exported here on first use, so that building the command
line (which imports :mod:`preflight.commands.plan`) does not load the engine.
"""

from __future__ import annotations

from typing import Any

_SEARCH = ("MAX_CANDIDATES", "MAX_CHANGES", "Change", "Plan", "bounds", "gating_packages",
           "make_plan", "pip_line", "versions_of")
_RELEASES = ("Releases", "candidates", "releases_from", "shipped_releases")

__all__ = [*_SEARCH, *_RELEASES]


def __getattr__(name: str) -> Any:
    if name in _SEARCH:
        from preflight.plan import search

        return getattr(search, name)
    if name in _RELEASES:
        from preflight.plan import releases

        return getattr(releases, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
