"""Why the product's TE smoke child runs its checks 0.4-0.6 s slower than a bare process (issue 26:
the check <= 5 s where bytecode exists).

    python3 benchmarks/te_child_bisect.py OUT_DIR [-n 3]      (real TE importable, on the GPU)

On 2026-11-27 (docs/gpu-results.md) the product's child (``runner.spawn``, alone) took 1.55-1.77 s
for the TE checks' first pass where a bare process with the same imports, flags and bytecode took
1.07-1.16 s. This runs the same work six ways, interleaved, all reading one bytecode prefix (the
product's, filled first by ``smoke --backend te``), to find which difference costs the time
(the "child" ways run the working tree's child, which pauses the garbage collector while it
imports; ``child_gc_on`` undoes that):

  bare         benchmarks/te_child_profile.py's process (torch, TE, the context made in a thread,
               then ``te_check.run_all``), started by ``subprocess.run``;
  bare_proc    the same process started as the product starts children (``proc.start``: its own
               session, a private working folder, pipes read by threads);
  child_sub    ``python -P -X pycache_prefix=... -m preflight.smoke.child`` with the request on
               its command line, started by ``subprocess.run``;
  child_spawn  the product's own ``runner.spawn`` (as te_child_where.py's ``child_alone``);
  child_gc_on  child_sub with the collector on during the imports (the child before that change);
  child_dims   child_sub with the training check's model as wide as the numerics check's layer
               (1024; a test of whether TE compiling kernels for a second set of shapes costs the
               first pass its time).
Then one run each of bare and child_sub with ``NVTE_DISABLE_NVRTC=1`` (how much of each lap is
TE's runtime compilation), and one of each under ``cProfile`` around ``te_check.run_all`` (the
costliest calls side by side). Writes OUT_DIR/te_child_bisect.json and te_child_bisect.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from te_child_profile import _CHILD  # noqa: E402

# The product's child run as a module, with an optional cProfile around te_check.run_all and the
# training check's widths changed (child_dims); prints the result document's TE laps.
_WRAP = r"""
import sys, json, os
prof, dims, gc_on = sys.argv[1] == "1", sys.argv[2] == "1", sys.argv[3] == "1"
argv = sys.argv[4:]
from preflight.smoke import te_check, train
if dims:
    train.IN, train.HIDDEN = 1024, 1024
if gc_on:   # the child as it was before its imports paused the collector
    import contextlib
    from preflight.smoke import child as _c
    _c._imports = contextlib.nullcontext
stats = {}
if prof:
    import cProfile, io, pstats
    inner = te_check.run_all
    def run_all(*a, **k):
        pr = cProfile.Profile(); pr.enable()
        try:
            return inner(*a, **k)
        finally:
            pr.disable()
            s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(40)
            stats["profile"] = s.getvalue()[-9000:]
    te_check.run_all = run_all
from preflight.smoke import child
child.main(["child", *argv])
doc = json.load(open(argv[1]))
te = doc.get("te") or {}
print(json.dumps({"torch_s": doc.get("torch_import_s"), "te_s": doc.get("te_import_s"),
                  "setup_s": doc.get("setup_s"), "stages_s": te.get("seconds"),
                  "timings": te.get("timings"), "cuda_warm": doc.get("cuda_warm"),
                  "verdict": {k: te.get(k) for k in ("engaged", "accurate", "train_ok",
                                                    "resume_status")}, **stats}))
os._exit(0)
"""


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (ROOT, os.environ.get("PYTHONPATH", "")) if p))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(extra or {})
    return env


def _last_json(text: str) -> dict[str, Any]:
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            try:
                return dict(json.loads(line))
            except ValueError:
                break
    return {"error": text[-1500:]}


def _request(lock: str) -> str:
    folder = tempfile.mkdtemp(prefix="bisect-req-")
    path = os.path.join(folder, "request.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"device": "cuda", "backends": ["te"], "speed": False, "only": ["te"],
                   "gpu_lock": lock}, fh)
    return path


def bare(prefix: str, proc_start: bool = False, profile: bool = False,
         extra: dict[str, str] | None = None) -> dict[str, Any]:
    argv = [sys.executable, "-X", f"pycache_prefix={prefix}", "-c", _CHILD, "ctx_thread",
            "1" if profile else "0"]
    t0 = time.perf_counter()
    if proc_start:
        from preflight.base import proc

        res = proc.collect(proc.start(argv, 300, env=_env(extra)))
        out = _last_json(res.stdout)
    else:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=_env(extra),
                           cwd=tempfile.mkdtemp(prefix="bisect-cwd-"))
        out = _last_json(p.stdout + "\n" + p.stderr[-1500:])
    out["wall_s"] = round(time.perf_counter() - t0, 3)
    out.pop("warm_timings", None)
    return out


def child_sub(prefix: str, lock: str, *, dims: bool = False, profile: bool = False,
              gc_on: bool = False, extra: dict[str, str] | None = None) -> dict[str, Any]:
    req = _request(lock)
    res = os.path.join(os.path.dirname(req), "result.json")
    argv = [sys.executable, "-P", "-X", f"pycache_prefix={prefix}", "-c", _WRAP,
            "1" if profile else "0", "1" if dims else "0", "1" if gc_on else "0", req, res,
            "--part", "te"]
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=_env(extra),
                       cwd=tempfile.mkdtemp(prefix="bisect-cwd-"))
    out = _last_json(p.stdout + "\n" + p.stderr[-1500:])
    out["wall_s"] = round(time.perf_counter() - t0, 3)
    return out


def child_spawn(folder: str) -> dict[str, Any]:
    """The product's own ``runner.spawn`` (te_child_where.py's ``child_alone``)."""
    from te_child_where import _alone

    r = _alone(folder)
    r["stages_s"] = r.pop("stage_s", None)
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("-n", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    xdg = tempfile.mkdtemp(prefix="xdg-bisect-")
    folder = os.path.join(xdg, "fp8-doctor")
    prefix = os.path.join(folder, "pycache")
    env = {**_env(), "XDG_CACHE_HOME": xdg}
    doc: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           "fill": [], "runs": {}}
    for _ in range(4):   # the product's cache, filled by its own filler
        p = subprocess.run([sys.executable, "-m", "preflight", "smoke", "--backend", "te",
                            "--format", "json"], capture_output=True, text=True, timeout=300,
                           env=env, cwd=tempfile.mkdtemp(prefix="bisect-cwd-"))
        try:
            status = (json.loads(p.stdout).get("smoke") or {}).get("bytecode_cache", {}).get("status")
        except ValueError:
            status = f"rc={p.returncode}"
        doc["fill"].append(status)
        if status != "filling":
            break
    lockdir = tempfile.mkdtemp(prefix="bisect-lock-")
    lock = os.path.join(lockdir, "gpu.lock")
    open(lock, "w").close()
    os.environ["XDG_CACHE_HOME"] = xdg
    ways = {"bare": lambda: bare(prefix), "bare_proc": lambda: bare(prefix, proc_start=True),
            "child_sub": lambda: child_sub(prefix, lock),
            "child_gc_on": lambda: child_sub(prefix, lock, gc_on=True),
            "child_spawn": lambda: child_spawn(folder),
            "child_dims": lambda: child_sub(prefix, lock, dims=True)}
    bare(prefix)   # untimed: whatever the first bare process writes to the prefix
    for _ in range(a.n):
        for name, fn in ways.items():
            r = fn()
            doc["runs"].setdefault(name, []).append(r)
            print(name, json.dumps(r)[:600], flush=True)
            _dump(a.out, doc)
    nvrtc = {"NVTE_DISABLE_NVRTC": "1"}
    doc["nvrtc_off"] = {"bare": bare(prefix, extra=nvrtc),
                        "child_sub": child_sub(prefix, lock, extra=nvrtc)}
    profiles = {"bare": bare(prefix, profile=True), "child_sub": child_sub(prefix, lock, profile=True)}
    with open(os.path.join(a.out, "te_child_bisect.txt"), "w", encoding="utf-8") as fh:
        for name, r in profiles.items():
            fh.write(f"==== {name}: {json.dumps({k: v for k, v in r.items() if k != 'profile'})}\n")
            fh.write(str(r.get("profile") or r.get("error")) + "\n")
    from te_child_where import medians

    doc["summary"] = {name: {**medians(rs, ("wall_s", "torch_s", "te_s", "setup_s", "stages_s")),
                             **medians(rs, ("numerics", "recipes", "drift", "train", "resume"),
                                       inner="timings")}
                      for name, rs in doc["runs"].items()}
    _dump(a.out, doc)
    print(json.dumps(doc["summary"], indent=1))
    print("nvrtc_off", json.dumps(doc["nvrtc_off"])[:1500])
    return 0


def _dump(out: str, doc: dict[str, Any]) -> None:
    with open(os.path.join(out, "te_child_bisect.json"), "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)


if __name__ == "__main__":
    sys.exit(main())
