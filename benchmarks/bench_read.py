"""Time reading one job (``preflight.jobs.read.read_paths``), each run in a fresh interpreter.

The reading kit keeps small caches (the shell lexer's last splits, the walk of the scripts a
script calls), so a loop in one process measures the cache; every run here starts a new
``python`` that imports the reader first and times only ``read_paths``. Several source trees
can be compared on the same box: their runs are interleaved (A B A B ...), so a change of load
touches both alike.

    python benchmarks/bench_read.py -n 15 PATH ...                   # this checkout
    python benchmarks/bench_read.py -n 15 --tree /tmp/base --tree . PATH ...

Prints the median (and min) milliseconds per tree and path.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

_CHILD = """
import json, sys, time
from preflight.jobs.read import read_paths
start = time.perf_counter()
read_paths(sys.argv[1:])
print(json.dumps(time.perf_counter() - start))
"""


def _once(tree: str, paths: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=tree, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", _CHILD, *paths], env=env, cwd=tree,
                         capture_output=True, text=True, check=True, timeout=120)
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("paths", nargs="+", help="job files or folders, each timed on its own")
    ap.add_argument("-n", type=int, default=15, help="runs per tree and path (default 15)")
    ap.add_argument("--tree", action="append", default=None,
                    help="a source tree holding preflight/ (repeat to compare; default: this one)")
    args = ap.parse_args(argv)
    trees = [str(Path(t).resolve()) for t in (args.tree or [Path(__file__).parents[1]])]
    paths = [str(Path(p).resolve()) for p in args.paths]
    for path in paths:
        times: dict[str, list[float]] = {t: [] for t in trees}
        for _ in range(args.n):
            for tree in trees:
                times[tree].append(_once(tree, [path]))
        for tree in trees:
            ms = [t * 1000 for t in times[tree]]
            print(f"{os.path.relpath(path)}  [{tree}]  median {statistics.median(ms):.1f} ms  "
                  f"min {min(ms):.1f} ms  (n={len(ms)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
