"""Where the TE smoke child's seconds go once bytecode exists (issue 26: the check <= 5 s there).

    python3 benchmarks/te_child_profile.py OUT_DIR [-n 3]      (real TE importable, on the GPU)

Each measurement is a fresh process run in the smoke child's order (torch, TE without its JAX
side, the CUDA context, then ``te_check.run_all``), with bytecode cached in a prefix warmed by one
untimed run (the condition of an install that has its bytecode). Modes, interleaved:

  plain       that order as the child runs it today;
  ctx_thread  a thread creates the device's primary CUDA context through the driver API
              (``ctypes``: ``cuInit``, ``cuDevicePrimaryCtxRetain``) while the main thread imports;
              a ``ctypes`` call releases the GIL, so the context is made beside the imports (the
              2026-11-24 overlap test used torch's own CUDA calls, which hold it: no gain).
Each run also runs ``run_all`` a second time in the same process: the stages' warm seconds, so the
difference is what the first use of the kernels and libraries costs. One more run of each mode
under ``cProfile`` (the stages only) writes the costliest calls. Writes OUT_DIR/te_child_profile.json
and OUT_DIR/te_child_profile.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_CHILD = r"""
import sys, time, json, os, threading, ctypes
T0 = time.perf_counter()
mode, profile = sys.argv[1], sys.argv[2] == "1"
out = {"mode": mode}
th = None
if mode == "ctx_thread":
    os.environ.setdefault("CUDA_MODULE_LOADING", "LAZY")   # what torch sets before its own init
    def _warm():
        t = time.perf_counter()
        try:
            cu = ctypes.CDLL("libcuda.so.1")
            r1 = cu.cuInit(0)
            t1 = time.perf_counter()
            dev = ctypes.c_int()
            cu.cuDeviceGet(ctypes.byref(dev), 0)
            ctx = ctypes.c_void_p()
            r2 = cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
            out["warm"] = {"load_init_s": round(t1 - t, 3), "retain_s": round(time.perf_counter() - t1, 3),
                           "rc": [r1, r2], "done_at_s": round(time.perf_counter() - T0, 3)}
        except Exception as exc:
            out["warm"] = repr(exc)
    th = threading.Thread(target=_warm, daemon=True)
    th.start()
t = time.perf_counter()
import torch
out["torch_s"] = round(time.perf_counter() - t, 3)
from preflight.smoke import te_check
t = time.perf_counter()
with te_check._without_te_jax():
    import transformer_engine.pytorch
out["te_s"] = round(time.perf_counter() - t, 3)
if th is not None:
    t = time.perf_counter(); th.join(); out["join_wait_s"] = round(time.perf_counter() - t, 3)
t = time.perf_counter()
torch.cuda.set_device(0)
cc = torch.cuda.get_device_capability(0)
torch.empty(1, device="cuda"); torch.cuda.synchronize()
out["setup_s"] = round(time.perf_counter() - t, 3)
pr = None
if profile:
    import cProfile
    pr = cProfile.Profile(); pr.enable()
t = time.perf_counter()
res = te_check.run_all("cuda:0", cc, resume=True)
torch.cuda.synchronize()
out["stages_s"] = round(time.perf_counter() - t, 3)
out["timings"] = res.get("timings")
if pr is not None:
    pr.disable()
    import io, pstats
    s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(60)
    u = io.StringIO(); pstats.Stats(pr, stream=u).sort_stats("tottime").print_stats(40)
    out["profile"] = s.getvalue()[-12000:] + "\n==== by own time ====\n" + u.getvalue()[-8000:]
out["first_pass_total_s"] = round(time.perf_counter() - T0, 3)
t = time.perf_counter()
res2 = te_check.run_all("cuda:0", cc, resume=True)
torch.cuda.synchronize()
out["warm_stages_s"] = round(time.perf_counter() - t, 3)
out["warm_timings"] = res2.get("timings")
out["verdict"] = {k: res.get(k) for k in ("engaged", "accurate", "ckpt_scale_drift", "train_ok",
                                          "resume_status", "resume_dcp_status")}
print(json.dumps(out))
"""


def _run(mode: str, prefix: str, profile: bool = False) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (ROOT, os.environ.get("PYTHONPATH", "")) if p))
    env.pop("PYTHONDONTWRITEBYTECODE", None)   # the prefix is written by the warm-up run
    p = subprocess.run([sys.executable, "-X", f"pycache_prefix={prefix}", "-c", _CHILD, mode,
                        "1" if profile else "0"], capture_output=True, text=True, timeout=180,
                       cwd=tempfile.gettempdir(), env=env)
    try:
        return dict(json.loads(p.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return {"mode": mode, "error": f"rc={p.returncode}: {p.stderr[-1500:]}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("-n", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    prefix = tempfile.mkdtemp(prefix="te-child-pyc-")
    doc: dict[str, Any] = {"python": sys.version.split()[0], "n": a.n, "warm_up": _run("plain", prefix)}
    runs: dict[str, list[dict[str, Any]]] = {"plain": [], "ctx_thread": []}
    for _ in range(a.n):
        for mode in runs:
            r = _run(mode, prefix)
            runs[mode].append(r)
            print(mode, {k: v for k, v in r.items() if k != "profile"}, flush=True)
    doc["runs"] = runs
    doc["summary"] = {}
    for mode, rs in runs.items():
        ok = [r for r in rs if "error" not in r]
        if ok:
            doc["summary"][mode] = {k: statistics.median(r[k] for r in ok) for k in
                                    ("torch_s", "te_s", "setup_s", "stages_s", "warm_stages_s",
                                     "first_pass_total_s")}
    profiles = [_run(mode, prefix, profile=True) for mode in runs]
    with open(os.path.join(a.out, "te_child_profile.txt"), "w", encoding="utf-8") as fh:
        for r in profiles:
            fh.write(f"==== {r.get('mode')}: {json.dumps({k: v for k, v in r.items() if k != 'profile'})}\n")
            fh.write(str(r.get("profile") or r.get("error")) + "\n")
    with open(os.path.join(a.out, "te_child_profile.json"), "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
    print(json.dumps(doc["summary"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
