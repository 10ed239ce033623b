"""Where the TE smoke child loses time inside a check (issue 26: the check <= 5 s with bytecode).

    python3 benchmarks/te_child_where.py OUT_DIR [-n 3]       (real TE importable, on the GPU)

On 2026-11-27 the TE child took 5.5-7.1 s inside ``check --example`` (stages 1.7-2.3 s) while the
same imports and checks in a bare process took 4.1-5.2 s (stages 1.1-1.2 s;
benchmarks/te_child_profile.py). This runs the same child four ways, interleaved, with one
bytecode cache filled first (``smoke --backend te`` until its details say ``used``):

  child_alone     the product's own child (``runner.spawn`` with the cache's launch flags, part
                  ``te``, a GPU lock file), nothing else running;
  smoke_te_only   ``fp8-doctor smoke --backend te --no-speed``: the parent and that one child;
  smoke_te        ``fp8-doctor smoke --backend te``: the base child (``_scaled_mm`` + speed) too;
  check           ``fp8-doctor check --example``: the static check, base and TE children;
  alone_torch     child_alone while another process imports torch from the same bytecode
                  prefix (the base child's import, without its checks): whether a second torch
                  import at the same time slows the TE child (2026-11-28).
Recorded per run: wall, the TE child's seconds, its torch / TE import, CUDA setup and stage laps.
Also the machine's CPU limits (``nproc``, cgroup ``cpu.max``). Writes OUT_DIR/te_child_where.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _cli(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "preflight", *args, "--format", "json"],
                       capture_output=True, text=True, timeout=300, env=env,
                       cwd=tempfile.mkdtemp(prefix="te-where-"))
    wall = round(time.perf_counter() - t0, 3)
    try:
        smoke = json.loads(p.stdout).get("smoke") or {}
    except ValueError:
        return {"wall_s": wall, "rc": p.returncode, "error": p.stderr[-800:]}
    te = (smoke.get("backends") or {}).get("te") or {}
    setup = (smoke.get("children_setup") or {}).get("te") or {}
    return {"wall_s": wall, "rc": p.returncode, "te_child_s": (smoke.get("children") or {}).get("te"),
            "torch_s": smoke.get("torch_import_s"), "te_s": smoke.get("te_import_s"),
            "setup_s": setup.get("setup_s"), "stage_s": te.get("seconds"),
            "timings": te.get("timings"), "cache": (smoke.get("bytecode_cache") or {}).get("status"),
            "children": smoke.get("children")}


def medians(runs: list[dict[str, Any]], keys: tuple[str, ...],
            inner: str | None = None) -> dict[str, float]:
    """The median of each of ``keys`` over ``runs`` (of ``run[inner]`` when given), where any run
    has a number for it."""
    row: dict[str, float] = {}
    for k in keys:
        vals = [(r.get(inner) or {}) if inner else r for r in runs]
        nums = [v[k] for v in vals if isinstance(v.get(k), (int, float))]
        if nums:
            row[k] = statistics.median(nums)
    return row


def _alone(folder: str) -> dict[str, Any]:
    from preflight.smoke import cache as bytecode
    from preflight.smoke.runner import collect_all, spawn

    cache = bytecode.resolve(["torch", "transformer_engine"], folder=folder)
    lockdir = tempfile.mkdtemp(prefix="te-where-lock-")
    lock = os.path.join(lockdir, "gpu.lock")
    open(lock, "w").close()
    req = {"device": "cuda", "backends": ["te"], "speed": False, "only": ["te"], "gpu_lock": lock}
    t0 = time.perf_counter()
    run = collect_all([spawn(req, 300, part="te", launch=bytecode.launch(cache, "smoke"))], 300)[0]
    wall = round(time.perf_counter() - t0, 3)
    doc, te = run.doc, run.doc.get("te") or {}
    return {"wall_s": wall, "status": run.status, "cache": cache.status, "te_child_s": run.seconds,
            "torch_s": doc.get("torch_import_s"), "te_s": doc.get("te_import_s"),
            "setup_s": doc.get("setup_s"), "stage_s": te.get("seconds"),
            "timings": te.get("timings"), "cuda_warm": doc.get("cuda_warm")}


def _alone_beside_torch(folder: str) -> dict[str, Any]:
    """child_alone with a second process importing torch (from the cache's prefix) at once."""
    from preflight.smoke import cache as bytecode

    cache = bytecode.resolve(["torch", "transformer_engine"], folder=folder)
    flags = list(bytecode.launch(cache, "smoke").flags)
    prefix = [f for f in flags if f.startswith("pycache_prefix=")]
    cmd = [sys.executable, *(["-X", prefix[0]] if prefix else []), "-c",
           "import time; t = time.perf_counter(); import torch; "
           "print(round(time.perf_counter() - t, 3))"]
    other = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    r = _alone(folder)
    out, _ = other.communicate(timeout=120)
    r["other_torch_s"] = float(out.strip() or "nan")
    r["other_prefix"] = bool(prefix)
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("-n", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    xdg = tempfile.mkdtemp(prefix="xdg-where-")
    folder = os.path.join(xdg, "fp8-doctor")
    env = {**os.environ, "XDG_CACHE_HOME": xdg}
    doc: dict[str, Any] = {"nproc": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)),
                           "fill": [], "runs": {}}
    for path in ("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"):
        try:
            with open(path, encoding="ascii") as fh:
                doc[path] = fh.read().strip()
        except OSError:
            pass
    for _ in range(4):
        r = _cli(["smoke", "--backend", "te"], env)
        doc["fill"].append(r)
        if r.get("cache") != "filling":
            break
    ways = {"child_alone": lambda: _alone(folder),
            "smoke_te_only": lambda: _cli(["smoke", "--backend", "te", "--no-speed"], env),
            "smoke_te": lambda: _cli(["smoke", "--backend", "te"], env),
            "check": lambda: _cli(["check", "--example"], env),
            "alone_torch": lambda: _alone_beside_torch(folder)}
    for _ in range(a.n):
        for name, fn in ways.items():
            r = fn()
            doc["runs"].setdefault(name, []).append(r)
            print(name, json.dumps(r), flush=True)
            with open(os.path.join(a.out, "te_child_where.json"), "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=1)
    doc["summary"] = {name: medians(rs, ("wall_s", "te_child_s", "torch_s", "te_s", "setup_s",
                                         "stage_s")) for name, rs in doc["runs"].items()}
    with open(os.path.join(a.out, "te_child_where.json"), "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
    print(json.dumps(doc["summary"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
