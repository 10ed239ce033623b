"""Where the TE smoke stage's seconds go (issue 15, item 5: the TE stage <= 8 s on an H100).

    python3 benchmarks/te_stage.py OUT_DIR [-n 3] [--pyc-prefix DIR]   (real TE importable, on the GPU)

Each measurement runs in a fresh process, because an import is only slow once per process:
  smoke      `fp8-doctor smoke --backend te --format json`: wall, torch import, the TE stage and its laps;
  bare       `import torch`, then `import transformer_engine.pytorch`, timed;
  ctx_first  the same after a CUDA context exists (the smoke child's order: setup, then the stage);
  profile    cProfile of the TE import in the ctx_first order: the 30 costliest calls;
  importtime `python -X importtime` of the TE import in the ctx_first order;
  sequential / overlap  the TE import before, or in a thread during, the main thread's CUDA
             context and cuBLAS warm-up (work that may release the GIL): is there overlap to win?
  bytecode   whether torch, sympy, torch._dynamo and TE have cached bytecode here.
--pyc-prefix DIR measures with PYTHONPYCACHEPREFIX=DIR after one untimed warm-up run: the condition
of a normal install (pip compiles bytecode when it installs) on an image that cannot cache it.
Writes OUT_DIR/te_stage.json (te_stage_pyc.json with --pyc-prefix), te_stage[_pyc]_profile.txt
and te_stage[_pyc]_importtime.txt; --smoke-only: the smoke runs and the bytecode report only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_IMPORT = r"""
import sys, time, json
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
if {ctx}:
    torch.cuda.set_device(0); torch.empty(1, device="cuda"); torch.cuda.synchronize()
t2 = time.perf_counter()
{pre}
import transformer_engine, transformer_engine.pytorch
t3 = time.perf_counter()
print(json.dumps({{"torch": t1 - t0, "setup": t2 - t1, "te": t3 - t2}}))
"""

# TE's own __init__ imports its JAX side whenever JAX is installed; the smoke child refuses it.
_NO_JAX = r"""
import importlib.abc
class _Skip(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "transformer_engine.jax" or name.startswith("transformer_engine.jax."):
            raise ImportError("skipped")
        return None
sys.meta_path.insert(0, _Skip())
"""

_PROFILE = r"""
import cProfile, pstats, io, sys
import torch
torch.cuda.set_device(0); torch.empty(1, device="cuda"); torch.cuda.synchronize()
""" + _NO_JAX + r"""
pr = cProfile.Profile(); pr.enable()
import transformer_engine, transformer_engine.pytorch
pr.disable()
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(45)
t = io.StringIO(); pstats.Stats(pr, stream=t).sort_stats("tottime").print_stats(30)
print(s.getvalue()); print("==== by own time ===="); print(t.getvalue())
"""


_OVERLAP = r"""
import sys, time, json, threading
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
""" + _NO_JAX + r"""
done = {}
def _te():
    import transformer_engine, transformer_engine.pytorch
    done["te"] = time.perf_counter()
th = threading.Thread(target=_te); th.start()
torch.cuda.set_device(0); torch.empty(1, device="cuda")
a = torch.randn(256, 256, device="cuda"); (a @ a).sum().item(); torch.cuda.synchronize()
t2 = time.perf_counter()
th.join(); t3 = time.perf_counter()
print(json.dumps({"torch": t1 - t0, "setup": t2 - t1, "te_done": done["te"] - t1, "both": t3 - t1}))
"""

_SEQUENTIAL = _OVERLAP.replace("th = threading.Thread(target=_te); th.start()", "_te()").replace(
    "th.join(); ", "")


def _py(code: str, extra: list[str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *(extra or []), "-c", code], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, env=_env())


def _env() -> dict[str, str]:
    env = dict(os.environ)
    if PYC_PREFIX:  # a bytecode cache needs writing allowed, as a normal install has it
        env["PYTHONPYCACHEPREFIX"] = PYC_PREFIX
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


PYC_PREFIX = ""
"""--pyc-prefix: where compiled bytecode goes when the site-packages cannot hold it (a read-only
image compiles every module from source in every process; see _bytecode())."""

_BYTECODE = r"""
import importlib.util, json, os, sys
prefix = sys.pycache_prefix
out = {"dont_write_bytecode": sys.dont_write_bytecode, "pycache_prefix": prefix}

def cached(srcs, pre):
    sys.pycache_prefix = pre
    try:
        return sum(os.path.exists(importlib.util.cache_from_source(p)) for p in srcs)
    finally:
        sys.pycache_prefix = prefix

for mod in ("torch", "sympy", "torch._dynamo", "transformer_engine.pytorch"):
    spec = importlib.util.find_spec(mod.split(".")[0])
    if spec is None or not spec.origin:
        continue
    root = os.path.dirname(spec.origin)
    if "." in mod:
        root = os.path.join(root, *mod.split(".")[1:])
    srcs = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py")][:4000]
    out[mod] = {"py": len(srcs), "pyc_installed": cached(srcs, None),
                "pyc_in_prefix": cached(srcs, prefix) if prefix else None,
                "dir_writable": os.access(root, os.W_OK)}
print(json.dumps(out))
"""


def _bytecode() -> dict[str, Any] | str:
    """Whether each heavy package's modules have cached bytecode here: without it, every process
    compiles them from source (the GPU machine's image, 2026-11-24: 5 of 11.5 s of the TE import
    under cProfile were ``compile``)."""
    p = _py(_BYTECODE)
    try:
        return dict(json.loads(p.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return f"rc={p.returncode}: {p.stderr[-800:]}"


def _timed_run(code: str) -> dict[str, float] | str:
    """The seconds one fresh process printed as its last line (JSON), or why there are none."""
    p = _py(code)
    try:
        return {k: round(v, 3) for k, v in json.loads(p.stdout.strip().splitlines()[-1]).items()}
    except (ValueError, IndexError):
        return f"rc={p.returncode}: {p.stderr[-800:]}"


def _smoke_run() -> dict[str, Any]:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "preflight", "smoke", "--backend", "te", "--format", "json"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT, env=_env())
    wall = round(time.perf_counter() - t0, 3)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        return {"rc": p.returncode, "wall_s": wall, "stderr": p.stderr[-1500:]}
    smoke = doc.get("smoke") or {}
    te = (smoke.get("backends") or {}).get("te") or {}
    # Since 2026-11-27 (speed2) TE is imported before its stage takes the GPU lock: the stage's
    # own "import" lap is ~0 and the import is te_import_s.
    return {"rc": p.returncode, "wall_s": wall, "torch_import_s": smoke.get("torch_import_s"),
            "te_import_s": smoke.get("te_import_s"), "te_stage_s": te.get("seconds"), "te_timings": te.get("timings"),
            "child_seconds": smoke.get("duration_s"),
            "verdict": {k: v for k, v in (doc.get("facts") or {}).items()
                        if k.startswith("smoke.te.") and not isinstance(v, (dict, list))}}


def _summary(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--pyc-prefix", default="", help="PYTHONPYCACHEPREFIX for every measured "
                    "process, warmed by one untimed run first (a normal install's cached bytecode)")
    ap.add_argument("--smoke-only", action="store_true", help="only the smoke runs and bytecode")
    a = ap.parse_args()
    global PYC_PREFIX
    PYC_PREFIX = a.pyc_prefix
    os.makedirs(a.out, exist_ok=True)
    doc: dict[str, Any] = {"python": sys.version.split()[0], "n": a.n}
    p = _py("import torch, transformer_engine as t; print(torch.__version__, t.__version__, "
            "torch.cuda.get_device_name(0))")
    doc["versions"] = p.stdout.strip() or p.stderr[-500:]
    doc["pyc_prefix"] = PYC_PREFIX or None
    if PYC_PREFIX:
        doc["warm_up_run"] = _smoke_run()  # fills the bytecode cache; not counted
    doc["bytecode"] = _bytecode()
    doc["smoke"] = [_smoke_run() for _ in range(a.n)]
    stages = [r["te_stage_s"] for r in doc["smoke"] if isinstance(r.get("te_stage_s"), float)]
    if stages:
        doc["te_stage_s"] = _summary(stages)
    print("smoke", [(r.get("wall_s"), r.get("te_stage_s"), r.get("te_timings")) for r in doc["smoke"]],
          flush=True)
    if a.smoke_only:
        _write(a.out, doc)
        return 0
    for name, ctx in (("bare", False), ("ctx_first", True)):
        runs = [_timed_run(_IMPORT.format(ctx=ctx, pre=_NO_JAX)) for _ in range(a.n)]
        doc[name] = runs
        ok = [r["te"] for r in runs if isinstance(r, dict)]
        if ok:
            doc[name + "_te_import_s"] = _summary(ok)
        print(name, runs, flush=True)
    for name, code in (("sequential", _SEQUENTIAL), ("overlap", _OVERLAP)):
        runs = [_timed_run(code) for _ in range(a.n)]
        doc[name] = runs
        print(name, runs, flush=True)
    prof = _py(_PROFILE)
    tag = "_pyc" if PYC_PREFIX else ""
    with open(os.path.join(a.out, f"te_stage{tag}_profile.txt"), "w", encoding="utf-8") as fh:
        fh.write(prof.stdout + prof.stderr[-3000:])
    imp = _py(_IMPORT.format(ctx=True, pre=_NO_JAX), extra=["-X", "importtime"])
    with open(os.path.join(a.out, f"te_stage{tag}_importtime.txt"), "w", encoding="utf-8") as fh:
        fh.write(imp.stderr)
    _write(a.out, doc)
    return 0


def _write(out: str, doc: dict[str, Any]) -> None:
    name = "te_stage_pyc.json" if doc.get("pyc_prefix") else "te_stage.json"
    with open(os.path.join(out, name), "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)


if __name__ == "__main__":
    sys.exit(main())
