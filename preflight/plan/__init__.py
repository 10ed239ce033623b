"""The upgrade plan (``fp8-doctor plan``): the search is :mod:`.search`, installability
:mod:`.requires`, the API call :mod:`.run`, the output :mod:`.render`; the command is
:mod:`preflight.commands.plan`.

The names of :mod:`.search` are re-exported here on first use, so that building the command
line (which imports :mod:`preflight.commands.plan`) does not load the engine.
"""

from __future__ import annotations

from typing import Any

_SEARCH = ("MAX_CANDIDATES", "MAX_CHANGES", "Change", "Plan", "Releases", "bounds", "candidates",
           "gating_packages", "make_plan", "pip_line", "releases_from", "shipped_releases",
           "versions_of")

__all__ = list(_SEARCH)


def __getattr__(name: str) -> Any:
    if name in _SEARCH:
        from preflight.plan import search

        return getattr(search, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
