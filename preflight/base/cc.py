"""Compute capabilities ("major.minor"): the one parser of ``*.cc`` facts and rule values.

Every reader of a compute capability goes through :func:`parse_cc` (the rule engine, the smoke
gate, ``--assume gpu.cc``, the cluster merge, ``effective.*``), so a fact means the same
everywhere; rule values are held to the documented "major.minor" form by
:func:`parse_rule_cc`. The GPU table that names each capability's products is
:mod:`preflight.probes.gpu_table`.
"""

from __future__ import annotations

import re
from typing import Any

_CC_RE = re.compile(r"^(\d{1,3})\.(\d{1,3})$")


def parse_cc(text: Any) -> tuple[int, int] | None:
    """``"8.9"`` -> (8, 9); ``"sm_90"`` / ``"90"`` -> (9, 0); anything else -> None.

    The one parser of compute-capability facts: the engine, the smoke gate and the cluster
    merge all read ``*.cc`` values through it, so a fact means the same everywhere.
    """
    if not isinstance(text, str):
        return None
    text = text.strip().lower()
    m = re.fullmatch(r"(\d+)\.(\d+)", text)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.fullmatch(r"(?:sm_?)?(\d{2,3})[a-z]?", text)
    if m:
        digits = m.group(1)
        return int(digits[:-1]), int(digits[-1])
    return None


def format_cc(major: int, minor: int) -> str:
    """(9, 0) -> ``"9.0"``, the form every ``*.cc`` fact uses."""
    return f"{major}.{minor}"


def cc_key(cc: str) -> tuple[int, int]:
    """Sort key of a ``"major.minor"`` string (so "10.0" sorts above "9.0")."""
    parsed = parse_cc(cc)
    return parsed if parsed is not None else (-1, -1)


def arch_for_cc(cc: str) -> str:
    """Architecture family of a compute capability; ``"unknown"`` when not recognized."""
    parsed = parse_cc(cc)
    if parsed is None:
        return "unknown"
    major, minor = parsed
    if major == 7:
        return "turing" if minor >= 5 else "volta"
    if major == 8:
        return "ada" if minor == 9 else "ampere"
    if major == 9:
        return "hopper"
    if major in (10, 11, 12):
        return "blackwell"
    if major < 7:
        return "pascal-or-older"
    return "unknown"


def parse_rule_cc(text: Any) -> tuple[int, int] | None:
    """A rule's compute-capability value: ``"8.9"`` -> ``(8, 9)``; None unless "major.minor".

    Rules are held to the documented form at load. Fact values are read by :func:`parse_cc`
    (the facts' parser, which also takes ``"sm_90"`` / ``"90"``); this one only adds the
    stricter shape check in front of it, so both agree on every "major.minor" string.
    """
    if not isinstance(text, str) or not _CC_RE.match(text.strip()):
        return None
    return parse_cc(text)
