"""Whether a planned set of versions can be installed together (issue 24, item 4).

``plan`` once proposed ``llm-foundry 0.14.0 -> 0.22.0`` on a torch 2.4 job: that wheel requires
``torch>=2.7.0,<2.7.1`` and ``mosaicml>=0.32.1,<0.33``, so pip would refuse the stack (or move
torch under the job). ``tools/refresh_releases.py`` records each release's ``Requires-Dist``
entries that name another package of the FP8 stack (from the wheel's METADATA); here they are
checked with ``packaging``'s specifiers and markers, the markers evaluated for the job's Python,
OS and machine (``host.*`` facts: the training node's when replayed from a snapshot). A candidate
stack is installable when no requirement between its packages fails, counting only requirements
that involve a package the plan changes (a conflict the job already has is not the plan's).
Requirements on a package the job does not have are pip's to install, not a conflict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from preflight.base.digits import ascii_digits

Table = Mapping[str, Mapping[str, Sequence[str]]]


@dataclass(frozen=True)
class Conflict:
    """``package version`` requires ``requirement`` of ``other``, which the stack has at
    ``other_version``."""

    package: str
    version: str
    other: str
    specifier: str
    other_version: str

    def __str__(self) -> str:
        return (f"{self.package} {self.version} requires {self.other}{self.specifier} "
                f"(the stack would have {self.other} {self.other_version})")


@lru_cache(maxsize=4096)
def _parse(text: str) -> Any:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


@lru_cache(maxsize=4096)
def _public(version: str) -> Any:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(Version(version).public)
    except InvalidVersion:
        return None


def environment(facts: Mapping[str, Any]) -> dict[str, str]:
    """Marker values for the job: ``host.python`` / ``host.os`` / ``host.arch`` when known,
    else this interpreter's (``packaging.markers.default_environment``)."""
    from packaging.markers import default_environment

    env = {k: str(v) for k, v in default_environment().items()}
    python = facts.get("host.python")
    if isinstance(python, str) and ascii_digits(python[:1]):
        env["python_full_version"] = python
        env["python_version"] = ".".join(python.split(".")[:2])
    os_name = facts.get("host.os")
    if isinstance(os_name, str) and os_name:
        env["platform_system"] = os_name
        env["sys_platform"] = {"Linux": "linux", "Darwin": "darwin",
                               "Windows": "win32"}.get(os_name, os_name.lower())
    arch = facts.get("host.arch")
    if isinstance(arch, str) and arch:
        env["platform_machine"] = arch
    env["extra"] = ""
    return env


class Requires:
    """The recorded requirements, for one job's marker environment."""

    def __init__(self, table: Table | None, env: Mapping[str, str]) -> None:
        self.table = table
        self.env = dict(env)

    def known(self, package: str, version: str) -> bool:
        pub = _public(version)
        return self.table is not None and pub is not None and \
            str(pub) in self.table.get(package, {})

    def of(self, package: str, version: str) -> list[Any]:
        """The parsed requirements of one release whose markers hold here."""
        pub = _public(version)
        if self.table is None or pub is None:
            return []
        out = []
        for text in self.table.get(package, {}).get(str(pub), ()):
            req = _parse(text)
            if req is None:
                continue
            if req.marker is not None and not req.marker.evaluate(self.env):
                continue
            out.append(req)
        return out

    def conflicts(self, stack: Mapping[str, str], changed: Sequence[str]) -> list[Conflict]:
        """Failed requirements between the packages of ``stack`` that involve a package in
        ``changed`` (as the requirer or the required)."""
        out = []
        moved = set(changed)
        for package, version in sorted(stack.items()):
            for req in self.of(package, version):
                other = req.name.lower().replace("_", "-")
                if other not in stack or (package not in moved and other not in moved):
                    continue
                have = _public(stack[other])
                if have is not None and not req.specifier.contains(have, prereleases=True):
                    out.append(Conflict(package, version, other, str(req.specifier),
                                        stack[other]))
        return out

    def unchecked(self, stack: Mapping[str, str], changed: Sequence[str]) -> list[str]:
        """Changed packages whose target release has no recorded requirements."""
        if self.table is None:
            return []
        return [f"{p} {stack[p]}" for p in sorted(changed) if not self.known(p, stack[p])]

    def satisfying(self, package: str, specifiers: Sequence[str],
                   releases: Sequence[str]) -> list[str]:
        """``releases`` of ``package`` that meet every specifier (lowest and newest)."""
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            sets = [SpecifierSet(s) for s in specifiers]
        except InvalidSpecifier:
            return []
        ok = [v for v in releases if (pub := _public(v)) is not None
              and all(s.contains(pub, prereleases=True) for s in sets)]
        ok.sort(key=lambda v: _public(v))
        return sorted({ok[0], ok[-1]}, key=lambda v: _public(v)) if ok else []
