"""Shell values in launch scripts: comments blanked, ``NAME=value`` assignments, and a flag's
value typed with ``$VAR`` / ``${VAR:-default}`` substituted. Nothing is executed.
"""

from __future__ import annotations

import re
from typing import Any

_ASSIGN = re.compile(r"""^\s*(?:export\s+|local\s+|declare\s+(?:-\w+\s+)?)?([A-Za-z_]\w*)="""
                     r"""("[^"\n]*"|'[^'\n]*'|[^\s;#()]*)\s*(?:#.*)?$""")


_VAR = re.compile(r"^\$\{?([A-Za-z_]\w*)(?::-([^}]*))?\}?$")


def typed(raw: str, variables: dict[str, str]) -> Any:
    """A flag value: quotes removed, ``$VAR`` / ``${VAR:-default}`` substituted, numbers typed."""
    if raw[:1] in "\"'" and raw[-1:] == raw[:1]:
        raw = raw[1:-1]
    for _ in range(8):       # NNODES=${SLURM_NNODES:-4}; --nnodes $NNODES: follow the chain
        m = _VAR.match(raw)
        if not m:
            break
        if m.group(1) in variables:
            raw = variables[m.group(1)]
        elif m.group(2) is not None:
            raw = m.group(2)    # the ${X:-default} default: X is not set in the script
        else:
            break
    if re.fullmatch(r"-?\d+", raw):
        # int() refuses more than 4,300 digits; such a "number" is no real setting: keep the text
        # (intent calls it implausible).
        return int(raw) if len(raw) <= 1000 else raw
    if re.fullmatch(r"-?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE]-?\d+)", raw):
        return float(raw)
    return raw


def strip_comments(text: str) -> str:
    """Blank out ``# ...`` comments (not ``$#`` or ``${#x}``), keeping offsets and lines."""
    return re.sub(r"(^|[ \t])#[^\n]*", lambda m: m.group(1) + " " * (len(m.group(0)) - 1), text,
                  flags=re.M)


def collect_variables(text: str) -> dict[str, str]:
    """``NAME=value`` shell assignments (first one wins), for ``$NAME`` in flag values."""
    variables: dict[str, str] = {}
    for line in text.splitlines():
        m = _ASSIGN.match(line)
        if m:
            value = m.group(2)
            if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2:
                value = value[1:-1]
            variables.setdefault(m.group(1), value)
    return variables

