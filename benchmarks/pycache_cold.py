"""CPU: what a cold bytecode cache costs the smoke children, and which filling policy avoids it.

    python benchmarks/pycache_cold.py [--site SITE_PACKAGES] [-r 3] [--out FILE.json]

Issue 26 / docs/benchmarks.md: on the GPU image (no bytecode, ``PYTHONDONTWRITEBYTECODE=1``)
the first ``check --example`` took 19.2 s where ``--no-cache`` took 12.7 s: the children all
ran with ``-X pycache_prefix=DIR`` on an empty DIR. This benchmark reproduces the situation on
any machine with torch: it builds a *farm* (a tree of symbolic links to SITE_PACKAGES' files,
without ``__pycache__``), so every package compiles from source, as on that image, and runs the
smoke step's imports in concurrent children (``-S``, the farm on ``PYTHONPATH``):

- ``base``: ``import torch``;
- ``te-like``: torch and its compiler stack (``torch._dynamo``, ``torch._inductor.compile_fx``),
  which Transformer Engine imports (no TE on a CPU box);
- ``torchao``: ``torch`` and ``torchao.float8`` (when installed).

Scenarios, each with a fresh prefix where it says cold, repeated ``-r`` times, interleaved:

- ``no cache``: every child compiles in memory (``--no-cache``);
- ``cold, every child writes``: every child gets the empty prefix (the code before this change);
- ``cold, one writer``: the largest child writes, the others compile in memory;
- ``cold, filler``: every child compiles in memory, and one more child at the lowest CPU priority
  (``cache.lowest_priority``) imports all of it into the prefix (what the smoke step does now,
  smoke/cache.py); it is killed when the others are done, as the smoke step ends it;
- ``warm``: every child reads the filled prefix.

For each: the slowest child's wall time (the critical path), each child's, and the CPU time of
all of them (``os.wait4``), plus the number of ``.pyc`` files a cold run writes. Every child
starts in a session of its own, as fp8-doctor's do. ``--only te-like`` runs one child (with the
filler: two processes, what a 2-core box can hold without the checks waiting for a core, as on
the 16-core GPU machines). No timing is asserted anywhere: this is a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from preflight.smoke.cache import lowest_priority  # noqa: E402

CHILDREN = {
    "base": "import torch",
    "te-like": "import torch, torch._dynamo, torch._inductor.compile_fx",
    "torchao": "import torch, torchao.float8",
}


def build_farm(site: str, root: str) -> str:
    """A copy of ``site`` made of symbolic links, with no ``__pycache__`` folder."""
    farm = os.path.join(root, "farm")
    for folder, dirs, files in os.walk(site):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(folder, site)
        dest = os.path.normpath(os.path.join(farm, rel))
        os.makedirs(dest, exist_ok=True)
        for name in files:
            if not name.endswith(".pyc"):
                os.symlink(os.path.join(folder, name), os.path.join(dest, name))
    return farm


def start(code: str, farm: str, prefix: str | None, write: bool, nice: bool = False
          ) -> tuple[subprocess.Popen[bytes], float]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["PYTHONPATH"] = farm
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    argv = [sys.executable, "-S", *(["-X", f"pycache_prefix={prefix}"] if prefix else []),
            "-c", code]
    # Each child in a session of its own, as preflight.probes.proc starts them; the filler lowers
    # itself as cache.fill does (nice 19, SCHED_IDLE, its session's autogroup).
    pre = (lambda: lowest_priority() and None) if nice else None
    return (subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, preexec_fn=pre, start_new_session=True),
            time.perf_counter())


def wait_all(procs: dict[str, tuple[subprocess.Popen[bytes], float]],
             kill_after: set[str] = frozenset()) -> dict[str, Any]:  # type: ignore[assignment]
    """Wait for every child not in ``kill_after``; then kill those (a filler still running)."""
    out: dict[str, Any] = {}
    cpu = 0.0
    pending = {p.pid: name for name, (p, _) in procs.items()}
    starts = {name: t for name, (_, t) in procs.items()}
    while any(name not in kill_after for name in pending.values()):
        pid, status, usage = os.wait4(-1, 0)
        name = pending.pop(pid, None)
        if name is None:
            continue
        out[name] = {"wall_s": round(time.perf_counter() - starts[name], 3),
                     "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
                     "rc": os.waitstatus_to_exitcode(status)}
        cpu += usage.ru_utime + usage.ru_stime
    for pid, name in list(pending.items()):
        os.kill(pid, 9)
        _, status, usage = os.wait4(pid, 0)
        out[name] = {"killed_at_s": round(time.perf_counter() - starts[name], 3),
                     "cpu_s": round(usage.ru_utime + usage.ru_stime, 3)}
    crit = [v["wall_s"] for k, v in out.items() if "wall_s" in v and k not in kill_after]
    return {"children": out, "slowest_s": max(crit), "cpu_s": round(cpu, 3)}


def pyc_count(prefix: str) -> int:
    return sum(f.endswith(".pyc") for _, _, fs in os.walk(prefix) for f in fs)


def scenario(name: str, kids: dict[str, str], farm: str, work: str) -> dict[str, Any]:
    prefix = os.path.join(work, "prefix")
    largest = list(kids)[-1]
    union = "; ".join(dict.fromkeys(kids.values()))
    if name != "warm":
        shutil.rmtree(prefix, ignore_errors=True)
    procs: dict[str, tuple[subprocess.Popen[bytes], float]] = {}
    kill: set[str] = set()
    if name == "cold, filler":
        procs["filler"] = start(union, farm, prefix, write=True, nice=True)
        kill = {"filler"}
    for kid, code in kids.items():
        if name == "no cache" or name == "cold, filler":
            procs[kid] = start(code, farm, None, write=False)
        elif name == "cold, one writer":
            procs[kid] = start(code, farm, prefix if kid == largest else None, write=kid == largest)
        else:   # every child writes (cold) or reads (warm) the prefix
            procs[kid] = start(code, farm, prefix, write=True)
    res = wait_all(procs, kill)
    res["pyc_in_prefix"] = pyc_count(prefix) if os.path.isdir(prefix) else 0
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", default=next(p for p in sys.path if p.endswith("site-packages")))
    ap.add_argument("-r", "--repeat", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--only", nargs="*", help="children to run (default: those importable)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="pycache-cold-")
    try:
        farm = build_farm(args.site, work)
        kids = {k: v for k, v in CHILDREN.items() if args.only is None or k in args.only}
        if not os.path.isdir(os.path.join(args.site, "torchao")):
            kids.pop("torchao", None)
        kids = dict(sorted(kids.items(), key=lambda kv: len(kv[1])))   # largest import last
        names = ("no cache", "cold, every child writes", "cold, one writer", "cold, filler")
        runs: dict[str, list[dict[str, Any]]] = {}
        for _ in range(args.repeat):
            for name in names:
                runs.setdefault(name, []).append(scenario(name, kids, farm, work))
            # warm after a complete fill
            shutil.rmtree(os.path.join(work, "prefix"), ignore_errors=True)
            p = start("; ".join(kids.values()), farm, os.path.join(work, "prefix"), True)[0]
            p.wait()
            runs.setdefault("warm", []).append(scenario("warm", kids, farm, work))
            for name in (*names, "warm"):
                r = runs[name][-1]
                print(f"{name:28} slowest {r['slowest_s']:6.2f} s  cpu {r['cpu_s']:6.2f} s  "
                      f"pyc {r['pyc_in_prefix']:5d}  "
                      + " ".join(f"{k}={v.get('wall_s', v.get('killed_at_s'))}"
                                 for k, v in r["children"].items()), flush=True)
        summary = {name: {"slowest_median_s": statistics.median(r["slowest_s"] for r in rs),
                          "cpu_median_s": statistics.median(r["cpu_s"] for r in rs)}
                   for name, rs in runs.items()}
        doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "python": sys.version.split()[0], "cpus": os.cpu_count(),
               "load": os.getloadavg(), "children": kids, "runs": runs, "summary": summary}
        for name, s in summary.items():
            print(f"{name:28} median slowest {s['slowest_median_s']:.2f} s, "
                  f"CPU {s['cpu_median_s']:.2f} s")
        if args.out:
            with open(args.out, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
