"""Version parsing, PEP 440 specifiers and OSV ranges for rule conditions, with a written policy.

Everything here is built on :mod:`packaging`; the policy below is what rules can rely on. It
exists because the versions we meet in the wild are rarely plain releases (research B.5).

**Policy** (also in docs/rule-format.md):

1. *A build-flavour label is ignored.* ``2.5.1+cu124`` compares as ``2.5.1`` and the pip nightly
   ``2.6.0.dev20241112+cu124`` as ``2.6.0.dev20241112`` (rule 3 then applies). Flavour labels
   name only how the same source was built: ``cuNNN``, ``cpu``, ``rocmX.Y``, ``xpu``, ``cxx11abi``
   and dotted combinations of them. Rules that care about the flavour read ``pkg.<dist>.local``
   or ``cuda.torch_build`` instead.
2. *Any other local label means a build from a commit, compared by its release.* NGC containers
   ship pre-release builds such as torch ``2.4.0a0+3bcc3cd.nv24.07``: built from a commit close
   to the 2.4.0 release and behaving like it, so it compares as ``2.4.0`` (epoch + release only;
   its ``a0`` / ``.dev`` / ``.post`` parts are dropped). Without this, ``>=2.4`` would be false
   for every NGC 24.07 container. Source builds (``1.12.0.dev0+abc1234``) are treated alike.
3. *Pre-releases count as what PEP 440 says they are*: ``2.6.0rc1`` and ``2.6.0.dev20250101``
   sort *before* ``2.6.0``. They are never excluded from a range, so ``>=2.5`` contains
   ``2.6.0rc1`` (packaging would need ``prereleases=True`` for that).
4. *Ordered specifier clauses (``< <= > >=``) use the plain PEP 440 total order*, not packaging's
   special cases ("``<2.6`` excludes 2.6 pre-releases", "``>2.5`` excludes 2.5 post-releases").
   This keeps a specifier and the equivalent OSV range in exact agreement: a nightly
   ``2.6.0.dev20250101`` is inside ``<2.6`` just as it is before OSV's ``fixed: "2.6.0"``.
   ``== != ~=`` clauses follow PEP 440 with pre-releases allowed (``==2.5.*`` contains
   ``2.5.0rc1``); ``===`` is an exact string match against the version as written. They are
   evaluated here on ``packaging.version`` (a property test holds them to what
   ``packaging.specifiers`` says), not through ``packaging.specifiers``, whose import costs
   ~10 ms a check.
5. *An unparseable version in the facts* (``"unknown"``, ``"git-abc"``) never crashes and never
   decides: the condition is undetermined, with the reason.

OSV ranges follow the OSV schema's evaluation pseudocode: the events are sorted by version and
walked as a timeline; ``introduced: "0"`` is before every version, ``limit: "*"`` is infinity.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.version import Version

__all__ = [
    "FLAVOUR", "InvalidRange", "OsvMatcher", "Range", "SpecifierMatcher", "VersionMatcher",
    "compile_matcher",
    "compile_osv", "compile_specifier", "comparison_key", "describe_range", "version_problem",
]

OSV_EVENTS = ("introduced", "fixed", "last_affected", "limit")


class InvalidRange(ValueError):
    """A specifier or OSV event list that cannot be used; the message says why."""


@functools.lru_cache(maxsize=8192)
def comparison_key(text: str) -> Version | None:
    """The version ``text`` is compared as under the policy above, or None if it does not parse.

    Cached: the same few hundred version strings are compared by every rule.
    """
    try:
        v = Version(text)
    except (ValueError, TypeError):
        # ValueError, not only InvalidVersion: a release part past Python's 4,300-digit int
        # limit raises a plain ValueError (a hostile METADATA or snapshot; issue 13 fuzzing).
        return None
    if v.local is not None:
        if FLAVOUR.fullmatch(v.local):
            return Version(v.public)  # policy 1: only the build flavour; pre/dev parts count
        # Policy 2: NGC / source builds compare by their release (epoch kept).
        epoch = f"{v.epoch}!" if v.epoch else ""
        return Version(epoch + ".".join(str(p) for p in v.release))
    return v


FLAVOUR = re.compile(r"(?:cu\d+|cpu|rocm\d+(?:\.\d+)*|xpu|cxx11abi)(?:\.(?:cu\d+|cpu|"
                      r"rocm\d+(?:\.\d+)*|xpu|cxx11abi))*")
"""Local labels that only name a build flavour (as packaging normalizes them: lower case)."""


def version_problem(value: Any) -> str | None:
    """Why ``value`` (a fact value) is not a usable version, or None when it is."""
    if not isinstance(value, str):
        return f"{value!r} is not a version string"
    if comparison_key(value) is None:
        return f"{value!r} is not a PEP 440 version"
    return None




class VersionMatcher:
    """Something a version key can be inside of: a specifier set or an OSV range list."""

    text: str

    def contains_key(self, key: Version) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def contains(self, version: str) -> bool | None:
        """True / False, or None when ``version`` does not parse (undetermined)."""
        key = comparison_key(version) if isinstance(version, str) else None
        if key is None:
            return None
        return self.contains_key(key)


_ORDERED: dict[str, Callable[[Version, Version], bool]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


@dataclass(frozen=True)
class _Clause:
    """One PEP 440 clause (see the policy above, rule 4)."""

    op: str
    version: Version | None = None          # the clause's version
    prefix: tuple[int, ...] | None = None   # release prefix of ==X.* / !=X.* / ~=
    text: str = ""                          # the string === compares with

    def test(self, key: Version, raw: str) -> bool:
        op = self.op
        if op in _ORDERED:
            assert self.version is not None
            return _ORDERED[op](key, self.version)
        if op == "===":
            return raw.strip().lower() == self.text.lower()
        if op == "~=":
            assert self.version is not None and self.prefix is not None
            return key >= self.version and _has_prefix(key, self.version.epoch, self.prefix)
        equal = self._equal(key, raw)
        return equal if op == "==" else not equal

    def _equal(self, key: Version, raw: str) -> bool:
        assert self.version is not None
        if self.prefix is not None:                       # ==2.5.* : release prefix
            return _has_prefix(key, self.version.epoch, self.prefix)
        if self.version.local is not None:                # ==2.5.1+cu124 : label and all
            try:
                return Version(raw) == self.version
            except ValueError:  # InvalidVersion, or a part past the int-digit limit
                return False
        return key == self.version                        # PEP 440: candidate's label ignored


def _has_prefix(key: Version, epoch: int, prefix: tuple[int, ...]) -> bool:
    """PEP 440 prefix match on the release segment (zero-padded), epochs equal."""
    release = key.release + (0,) * max(0, len(prefix) - len(key.release))
    return key.epoch == epoch and release[:len(prefix)] == prefix


_CLAUSE_RE = re.compile(r"(~=|===|==|!=|<=|>=|<|>)\s*(\S+)")


class SpecifierMatcher(VersionMatcher):
    """A PEP 440 specifier set (``">=1.6,<1.12"``) under the policy in the module docstring."""

    def __init__(self, text: str, clauses: Sequence[_Clause]) -> None:
        self.text = text
        self._clauses = tuple(clauses)

    def contains_key(self, key: Version) -> bool:
        return all(c.test(key, str(key)) for c in self._clauses)

    def contains(self, version: str) -> bool | None:
        key = comparison_key(version) if isinstance(version, str) else None
        if key is None:
            return None
        return all(c.test(key, version) for c in self._clauses)

    def __repr__(self) -> str:
        return f"SpecifierMatcher({self.text!r})"


def compile_specifier(text: str) -> SpecifierMatcher:
    """Parse a comma-separated PEP 440 specifier set; raises :class:`InvalidRange`."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidRange("a version specifier must be a non-empty string such as \">=1.6,<1.12\"")
    return SpecifierMatcher(text, [_clause(part.strip()) for part in text.split(",")])


def _clause(part: str) -> _Clause:
    bad = InvalidRange(f"{part!r} is not a PEP 440 specifier clause (write e.g. \">=2.4,<2.6\")")
    m = _CLAUSE_RE.fullmatch(part)
    if m is None:
        raise bad
    op, text = m.groups()
    if op == "===":
        return _Clause(op, text=text)
    wildcard = text.endswith(".*")
    if wildcard and op not in ("==", "!="):
        raise bad  # PEP 440: a trailing .* only with == and !=
    try:
        version = Version(text[:-2] if wildcard else text)
    except ValueError:   # InvalidVersion, or a part past the int-digit limit
        raise bad from None
    if wildcard:
        if version.local is not None or not _release_only(version):
            raise bad
        return _Clause(op, version, prefix=version.release)
    if op in _ORDERED or op == "~=":
        if version.local is not None:
            raise bad  # PEP 440: no local labels in ordered or compatible-release clauses
        if op == "~=":
            if len(version.release) < 2:
                raise bad  # ~=2 has no meaning; write ~=2.0
            return _Clause(op, version, prefix=version.release[:-1])
        # Without a local label a version is its own comparison key (policy rules 1-2).
    return _Clause(op, version)


def _release_only(version: Version) -> bool:
    return version.pre is None and version.post is None and version.dev is None


@dataclass(frozen=True)
class Range:
    """One OSV range: a timeline of (kind, version) events, sorted; see the OSV pseudocode."""

    events: tuple[tuple[str, str], ...]

    def contains_key(self, key: Version) -> bool:
        limits = [v for k, v in self.events if k == "limit"]
        if limits and not any(v == "*" or key < _event_version(v) for v in limits):
            return False
        affected = False
        for kind, text in self.events:
            if kind == "introduced":
                if text == "0" or key >= _event_version(text):
                    affected = True
            elif kind == "fixed":
                if key >= _event_version(text):
                    affected = False
            elif kind == "last_affected":
                if key > _event_version(text):
                    affected = False
        return affected

    def as_dicts(self) -> list[dict[str, str]]:
        return [{k: v} for k, v in self.events]


def _event_version(text: str) -> Version:
    key = comparison_key(text)
    assert key is not None, text  # validated by compile_osv
    return key


_EVENT_ORDER = {"introduced": 1, "last_affected": 2, "fixed": 0, "limit": 3}


def _sort_key(event: tuple[str, str]) -> tuple[int, Version | int, int]:
    kind, text = event
    if text == "0" and kind == "introduced":
        return (0, 0, 0)
    if text == "*":
        return (2, 0, 0)
    # At one version, a fix ends the previous interval before a new one is introduced.
    return (1, _event_version(text), _EVENT_ORDER[kind])


def _events_of(item: Any, where: str) -> list[tuple[str, str]]:
    if not isinstance(item, Mapping) or not item:
        raise InvalidRange(f"{where}: an event must be a mapping like {{introduced: \"1.6\"}}")
    if "events" in item:  # the verbose OSV shape {type: ECOSYSTEM, events: [...]}
        extra = set(item) - {"events", "type"}
        if extra:
            raise InvalidRange(f"{where}: unexpected key(s) {sorted(extra)} next to 'events'")
        if item.get("type", "ECOSYSTEM") != "ECOSYSTEM":
            raise InvalidRange(f"{where}: only ECOSYSTEM (PEP 440) ranges are supported")
        evs = item["events"]
        if not isinstance(evs, list):
            raise InvalidRange(f"{where}: 'events' must be a list")
        out: list[tuple[str, str]] = []
        for i, ev in enumerate(evs):
            out.extend(_events_of(ev, f"{where}.events[{i}]"))
        return out
    out = []
    for kind, text in item.items():
        if kind not in OSV_EVENTS:
            raise InvalidRange(f"{where}: unknown OSV event {kind!r} "
                               f"(expected one of {', '.join(OSV_EVENTS)})")
        if not isinstance(text, str):
            raise InvalidRange(
                f"{where}: {kind} must be a quoted string (YAML read {text!r}; write \"{text}\")")
        special = (kind == "introduced" and text == "0") or (kind == "limit" and text == "*")
        if not special and comparison_key(text) is None:
            raise InvalidRange(f"{where}: {kind} {text!r} is not a PEP 440 version")
        out.append((kind, text))
    return out


def compile_osv(value: Any, where: str = "range") -> Range:
    """One OSV range from an event list (``[{introduced: "1.6"}, {fixed: "1.12"}]``), a single
    mapping (``{introduced: "1.6", fixed: "1.12"}``) or the verbose ``{type, events}`` shape.

    Raises :class:`InvalidRange` naming the problem.
    """
    items = value if isinstance(value, list) else [value]
    if not items:
        raise InvalidRange(f"{where}: an OSV range needs at least one event")
    events: list[tuple[str, str]] = []
    for i, item in enumerate(items):
        events.extend(_events_of(item, f"{where}[{i}]" if isinstance(value, list) else where))
    kinds = [k for k, _ in events]
    if "introduced" not in kinds:
        raise InvalidRange(
            f"{where}: an OSV range needs an 'introduced' event (\"0\" = since ever)")
    if "fixed" in kinds and "last_affected" in kinds:
        raise InvalidRange(f"{where}: use 'fixed' or 'last_affected', not both (OSV schema)")
    return Range(tuple(sorted(events, key=_sort_key)))


class OsvMatcher(VersionMatcher):
    """``version_in`` with an OSV event list."""

    def __init__(self, rng: Range) -> None:
        self.range = rng
        self.text = ", ".join(f"{k} {v}" for k, v in rng.events)

    def contains_key(self, key: Version) -> bool:
        return self.range.contains_key(key)

    def __repr__(self) -> str:
        return f"OsvMatcher({self.text!r})"


def compile_matcher(value: Any, where: str = "value") -> VersionMatcher:
    """A specifier string or an OSV event list -> a matcher; raises :class:`InvalidRange`."""
    if isinstance(value, str):
        return compile_specifier(value)
    if isinstance(value, (list, dict)):
        return OsvMatcher(compile_osv(value, where))
    raise InvalidRange(
        f"version_in takes a quoted PEP 440 specifier (\">=1.6,<1.12\") or an OSV event list, "
        f"not {type(value).__name__} {value!r}")


def describe_range(rng: Range) -> str:
    """Human text for the catalogue: ``>=0.34.0, <1.11.0``."""
    parts = []
    for kind, text in rng.events:
        if kind == "introduced":
            parts.append("all versions" if text == "0" else f">={text}")
        elif kind == "fixed":
            parts.append(f"<{text}")
        elif kind == "last_affected":
            parts.append(f"<={text}")
        elif kind == "limit" and text != "*":
            parts.append(f"(limit <{text})")
    return ", ".join(parts)
