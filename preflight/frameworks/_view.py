"""Shared helpers for deriving intent from one framework's ``config.<kind>.*`` facts.

:class:`View` reads the facts of one kind (value, ``file:line`` source, typed access); the size
bounds keep intent values JSON-safe. Each framework module's ``derive`` uses it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks._derived import Derived, IntentOut, Stated

__all__ = ["Derived", "IMPLAUSIBLE", "IntentOut", "LIT_PRECISION", "MAX_PLAUSIBLE", "Stated",
           "View", "first"]

MAX_PLAUSIBLE = 2 ** 53
"""No real size, count or degree is larger. Above it JSON readers lose precision, and Python
refuses to print integers of more than 4,300 digits (``json.dumps`` raised on a 6,000-digit
token count built from two 3,000-digit arguments). :func:`preflight.intent` turns any intent
value beyond it into ``Unknown("not a plausible size")``."""


IMPLAUSIBLE = MAX_PLAUSIBLE + 1
"""What :meth:`View.int` gives for a digit string too long to be a real size: it stays "too big"
through products, so intent reports it as implausible instead of as absent."""


LIT_PRECISION = {"transformer-engine": "fp8", "transformer-engine-float16": "fp8",
                  "bf16-mixed": "bf16", "bf16-true": "bf16", "bf16": "bf16", "16-mixed": "fp16",
                  "16-true": "fp16", "16": "fp16", "32-true": "fp32", "32": "fp32",
                  "64-true": "fp32"}


class View:
    """Read helpers over the facts of one kind: value, source, typed access."""

    def __init__(self, facts: Mapping[str, Any], kind: str, prov: Mapping[str, str]) -> None:
        self.facts, self.prefix, self.prov = facts, f"config.{kind}.", prov

    def has(self, key: str) -> bool:
        return self.prefix + key in self.facts

    def get(self, key: str | None, default: Any = None) -> Any:
        if key is None:       # a _first() that found none of its keys
            return default
        value = self.facts.get(self.prefix + key, default)
        return default if isinstance(value, Unknown) else value

    def unknown(self, key: str) -> Unknown | None:
        """The ``Unknown`` a reader stored for ``key`` (e.g. a flag given without its value)."""
        value = self.facts.get(self.prefix + key)
        return value if isinstance(value, Unknown) else None

    def src(self, key: str | None, fallback: str = "intent") -> str:
        return fallback if key is None else self.prov.get(self.prefix + key, fallback)

    def int(self, key: str) -> int | None:
        """An integer setting (``4`` or ``"4"``); None when absent or not an integer.

        Larger than :data:`MAX_PLAUSIBLE` stays larger (a 5,000-digit string gives
        :data:`IMPLAUSIBLE` rather than ``int()``, which refuses more than 4,300 digits)."""
        value = self.get(key)
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        # ASCII digits only: isdigit accepts "²", which int() refuses (base/digits.py).
        if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value.strip()):
            digits = value.strip().lstrip("-").lstrip("0") or "0"
            negative = value.strip().startswith("-")
            if len(digits) > 16:
                return -IMPLAUSIBLE if negative else IMPLAUSIBLE
            # (the zeros stripped: int() counts them against its 4,300-digit limit, so
            # `--cp 000...08` was an internal error; redteam11)
            return -int(digits) if negative else int(digits)
        return None

    def truthy(self, key: str | None) -> bool:
        value = self.get(key)
        if isinstance(value, str):
            return value.strip().lower() in {"true", "1", "yes"}
        return bool(value) and value is not None

    def any_prefix(self, key: str) -> bool:
        p = self.prefix + key + "."
        return self.has(key) or any(n.startswith(p) for n in self.facts)



def first(v: View, *keys: str) -> str | None:
    """The first of ``keys`` that is set (and not null)."""
    return next((k for k in keys if v.has(k) and v.get(k) is not None), None)


def with_default(v: View, key: str, defaults: Mapping[str, tuple[Any, str]],
                 default_at: str) -> tuple[Any, str]:
    """``(value, source)`` of ``key``: the job's, else the schema default in ``defaults`` (its
    own source, or ``default_at``), Unknown where the job's base config file was not read
    (``base_config`` Unknown). The readers of a config over a dataclass schema (ChatLearn,
    EasyR1) ask it so."""
    if v.has(key):
        return v.facts.get(v.prefix + key), v.src(key)
    base = v.facts.get(v.prefix + "base_config")
    if isinstance(base, Unknown):
        return base, v.src("base_config")
    return defaults.get(key, (None, default_at))


def keys_matching(v: View, word: re.Pattern[str], most: int = 3) -> list[str]:
    """The first ``most`` keys the job sets (under the reader's prefix) that ``word`` finds."""
    keys = (k[len(v.prefix):] for k in v.facts if k.startswith(v.prefix))
    return [k for k in keys if word.search(k)][:most]

