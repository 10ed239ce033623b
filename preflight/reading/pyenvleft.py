"""The environment state :mod:`.pyenvset`'s walk carries (split from it): what each variable holds
after the statements walked so far (:class:`Write`, :data:`UNSET` for a removed one), a write
whose key the text does not give (:attr:`Left.wild`), and :func:`merge`, one state for several
ways the run may go, where a variable the ways leave differently is Unknown naming the test.
Nothing is imported or run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from preflight.findings import Source
from preflight.reading.pyvalues import Unresolved

UNSET = "\x00unset"
"""A variable the script removed (``pop`` / ``del``)."""


@dataclass(frozen=True)
class Write:
    """What a variable holds after the top level: a string, :data:`UNSET` or Unresolved; where
    it was written and the index of the top-level statement that wrote it."""

    value: str | Unresolved
    where: Source
    top: int


@dataclass
class Left:
    """The environment the walk has left so far."""

    vars: dict[str, Write] = field(default_factory=dict)
    wild: Unresolved | None = None
    """A write whose key the text does not give: any variable not known may have changed."""

    def copy(self) -> Left:
        return Left(dict(self.vars), self.wild)


def env_text(value: Any, line: int) -> str | Unresolved:
    """What a write leaves: the string written, else Unresolved (a value not given as text)."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Unresolved):
        return value
    return Unresolved("an environment value the text does not give as a string", line)


def merge(states: list[Left], where: Source, test: str) -> Left:
    """One state for several ways the run may go: a variable they leave alike keeps it."""
    out = states[0].copy()
    out.wild = next((s.wild for s in states if s.wild is not None), None)
    for name in {n for s in states for n in s.vars}:
        got = [s.vars.get(name) for s in states]
        values = {w.value if w is not None else None for w in got
                  if w is None or isinstance(w.value, str)}
        if len(values) == 1 and all(w is not None and isinstance(w.value, str) for w in got):
            continue
        first = next(w for w in got if w is not None)
        out.vars[name] = Write(Unresolved(f"{name} is set differently depending on {test} "
                                          f"({where}), which the text does not decide",
                                          where.line), first.where, first.top)
    return out


__all__ = ["UNSET", "Left", "Write", "env_text", "merge"]
