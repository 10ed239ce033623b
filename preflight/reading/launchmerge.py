"""What two launch lines (or scripts) that run one file give its process alike
(:func:`merged`): the environments :func:`.launchenv.process_env` reads, compared; split out of
:mod:`.launchenv` (at the module size limit).
"""

from __future__ import annotations

from preflight.reading.launchenv import Given
from preflight.reading.shellvars import runtime, runtime_reason


def merged(old: dict[str, tuple[str, str]] | None, new: Given, line: str,
           ) -> dict[str, tuple[str, str]]:
    """What two launch lines (or scripts) that run one file give it alike; a variable they
    give differently, or one gives and the other not, is a runtime marker naming both."""
    given = {n: (v, w) for n, v, w in new}
    if old is None:
        return given
    out: dict[str, tuple[str, str]] = {}
    for name in {*old, *given}:
        a, b = old.get(name), given.get(name)
        if a is not None and b is not None and a[0] == b[0]:
            out[name] = a
            continue
        first = f"{a[0]!r} at {a[1]}" if a is not None and runtime_reason(a[0]) is None else \
            "unset at another launch line" if a is None else f"unknown at {a[1]}"
        second = f"{b[0]!r} at {b[1]}" if b is not None and runtime_reason(b[0]) is None else \
            f"unset at {line}" if b is None else f"unknown at {b[1]}"
        out[name] = (runtime(f"the launch lines that run this file give {name} differently: "
                             f"{first[:120]}, {second[:120]}"), (a or b or ("", line))[1])
    return out
