"""Benchmark of the bounds on rule-pack regular expressions (preflight/engine/regexbounds.py).

For patterns that stay legal, the worst of several adversarial subjects at the pattern's subject
limit (MATCH_LIMIT characters for degree 1, QUADRATIC_LIMIT for degree 2) is timed; so is a
whole evaluation that spends its matching budget. For reference, a refused cubic pattern is timed
on a subject a quarter of MATCH_LIMIT long (issue 21: ``.*a.*a.*...b`` on 4,000 a's ran 60 s).

    python benchmarks/bench_regex.py

Target (issue 21 item 6): every legal match on a legal subject in milliseconds; a whole
evaluation's matching bounded by the budget (about a second at worst on a loaded machine).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from preflight.engine import regexbounds  # noqa: E402

LEGAL = [r".*a.*b", r"(?i).*deepspeed.*", r"[ab]*[ac]*b", r".*.*b", r"(?:.*a)?.*b",
         r"\w*\w*x", r".*a.{0,4000}b", r"\s*-1\s*,\s*(-1|0)\s*", r".*b", r"[^a]*a[^a]*a[^a]*b"]


def _subjects(n: int) -> list[str]:
    return [s[:n] for s in ("a" * n, "ab" * n, " " * n, "deepspeed" * n, "x" * n,
                            "a" * (n - 1) + "c")]


def _worst(pattern: str, n: int) -> float:
    rx = re.compile(pattern)
    worst = 0.0
    for s in _subjects(n):
        start = time.perf_counter()
        rx.fullmatch(s)
        worst = max(worst, time.perf_counter() - start)
    return worst


def main() -> None:
    print(f"{'degree':>6} {'limit':>6} {'worst ms':>9}  pattern")
    for pattern in LEGAL:
        n = regexbounds.subject_limit(pattern)
        print(f"{regexbounds.degree(pattern):>6} {n:>6} {_worst(pattern, n) * 1000:>9.2f}  "
              f"{pattern}")
    # a whole budget of the most expensive legal matches
    rx, n = re.compile(r"\w*\w*x"), regexbounds.QUADRATIC_LIMIT
    runs = regexbounds.MATCH_BUDGET // regexbounds.cost(r"\w*\w*x", n)
    start = time.perf_counter()
    for _ in range(runs):
        rx.fullmatch("a" * n)
    print(f"one evaluation's whole budget ({runs} quadratic scans of {n} characters): "
          f"{time.perf_counter() - start:.2f} s")
    cubic = r".*a.*a.*b"
    n = regexbounds.MATCH_LIMIT // 4
    print(f"refused (degree {regexbounds.degree(cubic)}) {cubic} on {n} characters: "
          f"{_worst(cubic, n):.2f} s (x64 at {regexbounds.MATCH_LIMIT})")


if __name__ == "__main__":
    main()
