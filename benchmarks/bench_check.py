#!/usr/bin/env python3
"""Benchmark: ``fp8-doctor check --no-smoke`` against ``python -m torch.utils.collect_env``.

Runs both commands N times, interleaved (so machine load drifts hit both alike), after one
warm-up run each, and reports medians and their ratio. Then runs the check once under
``python -X importtime`` and lists any heavy framework (torch, transformer_engine, deepspeed,
torchao) imported on that path: the static check must import none of them.

Also times ``preflight.probes.collect_all()`` alone in a fresh interpreter (``--probes``).

Targets (issue 26 item 4; issue 14 had 0.2 s and 10 %, DESIGN / issue #2 0.3 s): check median
<= 0.15 s and <= 8 % of collect_env; no torch import. Both commands run in an empty folder (see
WORKDIR). ``--example`` times ``check --no-smoke --example`` instead (the bundled example job:
its configs are read, and ~130 rules built instead of ~30).
``--enforce`` makes the exit code 1 when a target is missed. ``--markdown`` prints a section for
docs/benchmarks.md.

    python benchmarks/bench_check.py -n 10 --markdown
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

HEAVY = ("torch", "transformer_engine", "deepspeed", "torchao")
TARGET_S = 0.15   # issue 26 item 4 (issue 14 item 4: 0.2; before it 0.3)
TARGET_RATIO = 0.08
# Every command runs in an empty folder: `python -m` puts the working directory first on sys.path,
# so run from a checkout it would import the checkout's preflight (no rule index, the YAML path),
# not the installed wheel, and read the checkout's pyproject.toml.
WORKDIR = tempfile.mkdtemp(prefix="fp8-doctor-bench-")
atexit.register(shutil.rmtree, WORKDIR, True)

# Wall and CPU time of importing the probes and running them, inside a fresh interpreter. CPU time
# is what the probes cost; wall time also carries the machine's load.
PROBES_CODE = ("import time; t = time.perf_counter(); c = time.process_time(); "
               "from preflight.probes import collect_all; collect_all(); "
               "print(time.perf_counter() - t, time.process_time() - c)")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], ok_codes: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """Wall and CPU (user + sys) seconds of one run; fails loudly when the command fails.

    CPU time is what the command costs whatever else the machine runs; on a loaded machine wall
    time grows with the load, CPU time barely does.
    """
    cpu0 = _children_cpu()
    start = time.perf_counter()
    res = subprocess.run(argv, capture_output=True, text=True, cwd=WORKDIR)
    elapsed = time.perf_counter() - start
    if res.returncode not in ok_codes:
        sys.exit(f"command failed with exit code {res.returncode}: {' '.join(argv)}\n"
                 f"{res.stderr[-2000:]}")
    return elapsed, _children_cpu() - cpu0


def heavy_imports(python: str) -> list[str]:
    """Heavy frameworks imported by the check, from ``-X importtime`` (one line per module)."""
    res = subprocess.run([python, "-X", "importtime", "-m", "preflight", "check", "--no-smoke",
                          "--format", "json"], capture_output=True, text=True, cwd=WORKDIR)
    if res.returncode not in (0, 1):
        sys.exit(f"check failed under -X importtime (exit {res.returncode}):\n{res.stderr[-2000:]}")
    modules = set()
    for line in res.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            modules.add(name)
    if not modules:
        sys.exit("-X importtime printed nothing; cannot tell what was imported")
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def load() -> str:
    """The 1-minute load average against the CPU count: timings on a busy machine are inflated."""
    try:
        return f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    except OSError:
        return "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=10, help="runs of each command (default 10)")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter with fp8-doctor (and torch, for collect_env)")
    parser.add_argument("--probes", action="store_true",
                        help="only time collect_all() in fresh interpreters (no pipeline needed)")
    parser.add_argument("--markdown", action="store_true",
                        help="print a docs/benchmarks.md section")
    parser.add_argument("--enforce", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--example", action="store_true",
                        help="time `check --no-smoke --example` (the bundled example job)")
    args = parser.parse_args()
    py = args.python

    if args.probes:
        runs: list[float] = []
        cpu: list[float] = []
        for _ in range(args.n + 1):
            out = subprocess.run([py, "-c", PROBES_CODE], capture_output=True, text=True,
                                 check=True, cwd=WORKDIR)
            wall_s, cpu_s = out.stdout.split()
            runs.append(float(wall_s))
            cpu.append(float(cpu_s))
        runs, cpu = runs[1:], cpu[1:]  # the first run warms the file cache
        print(json.dumps({"collect_all_median_s": round(statistics.median(runs), 4),
                          "collect_all_cpu_median_s": round(statistics.median(cpu), 4),
                          "runs": len(runs), "min_s": round(min(runs), 4),
                          "max_s": round(max(runs), 4), "load": load()}))
        return 0

    check = [py, "-m", "preflight", "check", "--no-smoke", "--format", "json",
             *(["--example"] if args.example else [])]
    collect_env = [py, "-m", "torch.utils.collect_env"]
    timed(check, (0, 1))
    timed(collect_env)
    t_check: list[tuple[float, float]] = []
    t_env: list[tuple[float, float]] = []
    for _ in range(args.n):
        t_check.append(timed(check, (0, 1)))
        t_env.append(timed(collect_env))
    m_check = statistics.median(w for w, _ in t_check)
    m_env = statistics.median(w for w, _ in t_env)
    c_check = statistics.median(c for _, c in t_check)
    c_env = statistics.median(c for _, c in t_env)
    ratio = m_check / m_env
    heavy = heavy_imports(py)
    where = subprocess.run([py, "-c", "import preflight; print(preflight.__file__)"],
                           capture_output=True, text=True, cwd=WORKDIR).stdout.strip()
    result = {
        "runs": args.n,
        "check": " ".join(check[2:]),
        "preflight_from": where,
        "load_after": load(),
        "check_median_s": round(m_check, 3),
        "check_min_s": round(min(w for w, _ in t_check), 3),
        "collect_env_median_s": round(m_env, 3),
        "ratio": round(ratio, 4),
        "check_cpu_median_s": round(c_check, 3),
        "collect_env_cpu_median_s": round(c_env, 3),
        "cpu_ratio": round(c_check / c_env, 4),
        "heavy_imports_on_check_path": heavy,
        "targets_met": m_check <= TARGET_S and ratio <= TARGET_RATIO and not heavy,
    }
    print(json.dumps(result, indent=2))
    if args.markdown:
        torch_version = subprocess.run(
            [py, "-c", "import importlib.metadata as m; print(m.version('torch'))"],
            capture_output=True, text=True).stdout.strip() or "?"
        print(f"""
## check vs collect_env

Command: `python benchmarks/bench_check.py -n {args.n}{' --example' if args.example else ''} --markdown` (interleaved runs after one
warm-up each; medians of wall time per process).

| | median wall | median CPU (user+sys) |
|---|---|---|
| `python {' '.join(check[1:])}` | {m_check:.3f} s | {c_check:.3f} s |
| `python -m torch.utils.collect_env` | {m_env:.3f} s | {c_env:.3f} s |
| ratio | {ratio:.1%} | {c_check / c_env:.1%} |

Heavy frameworks imported on the check path (`-X importtime`): {', '.join(heavy) or 'none'}.

Machine: {platform.machine()}, {os.cpu_count()} CPUs (load average {load()}),
Python {platform.python_version()}, torch {torch_version};
{datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}.
Targets: median <= {TARGET_S} s and <= {TARGET_RATIO:.0%} of collect_env:
{'met' if result['targets_met'] else 'NOT met'}.
""")
    return 1 if args.enforce and not result["targets_met"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
