"""GPU: the full check's wall time (issue 26, item 1) next to its peers, and the old code's.

    python benchmarks/gpu_check.py --out DIR --new NEW_ROOT --old OLD_ROOT [-n 3]

Every command runs in a fresh empty folder with the environment as the machine gives it (the
GPU image sets ``PYTHONDONTWRITEBYTECODE=1`` and its packages hold no bytecode), fp8-doctor from
a source tree on ``PYTHONPATH`` (NEW_ROOT: this branch; OLD_ROOT: the code before it). The
bytecode cache lives in a fresh ``XDG_CACHE_HOME``: its first run (which fills it) is timed apart.

Timed once: ``check --example`` with the cache empty (the first run on a machine), with
``--no-cache`` (side-by-side children and the early start only), ``--no-smoke`` (the static part),
and the old code's ``check --example``. Timed ``-n`` times, interleaved:
``check --example`` and ``smoke`` (every installed backend) with the cache filled,
``accelerate env``, ``python -m torch.utils.collect_env`` and ``ds_report``. The new and old
``check --example`` findings and smoke verdicts are compared (they must be identical).
Writes DIR/gpu_check.json and prints a table.
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

VERDICT_KEYS = ("smoke.status", "smoke.backends", "smoke.scaled_mm.engaged", "smoke.te.engaged",
                "smoke.te.accurate", "smoke.te.resume_status", "smoke.te.resume_dcp_status",
                "smoke.te.resume_dropped_status", "smoke.te.resume_unsafe_env_status",
                "smoke.te.ckpt_scale_drift", "smoke.torchao.engaged",
                "smoke.torchao.resume_status")


def timed(argv: list[str], env: dict[str, str], timeout: float = 300) -> dict[str, Any]:
    cwd = tempfile.mkdtemp(prefix="gpu-check-")
    t0 = time.perf_counter()
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                           timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = None, "", "timeout"
    except OSError as exc:   # a peer not installed here
        rc, out, err = None, "", f"{type(exc).__name__}: {exc}"
    return {"wall_s": round(time.perf_counter() - t0, 3), "rc": rc, "stdout": out,
            "stderr_tail": err[-1500:]}


def verdict(stdout: str) -> dict[str, Any]:
    try:
        doc = json.loads(stdout)
    except ValueError:
        return {"unparsed": stdout[-300:]}
    facts = doc.get("facts") or {}
    smoke = doc.get("smoke") or {}
    return {"findings": sorted(f["id"] for f in doc.get("findings", [])),
            "exit_code": doc.get("exit_code"),
            **{k: facts.get(k) for k in VERDICT_KEYS if k in facts},
            "children": smoke.get("children"), "bytecode_cache": smoke.get("bytecode_cache"),
            "started_early": smoke.get("started_early"), "duration_s": smoke.get("duration_s")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--old", required=True)
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--site", default="/tmp/site")
    args = ap.parse_args()
    py = sys.executable
    base = dict(os.environ)
    xdg = tempfile.mkdtemp(prefix="xdg-")

    def env_for(root: str) -> dict[str, str]:
        return {**base, "PYTHONPATH": f"{args.site}:{root}", "XDG_CACHE_HOME": xdg}

    new, old = env_for(args.new), env_for(args.old)
    fp8 = [py, "-m", "preflight"]
    check = [*fp8, "check", "--example", "--format", "json"]
    runs: dict[str, list[dict[str, Any]]] = {}

    def record(name: str, argv: list[str], env: dict[str, str], keep: bool = False) -> None:
        res = timed(argv, env)
        if keep or name.startswith(("new check", "old check")):
            res["verdict"] = verdict(res["stdout"])
        res.pop("stdout")
        runs.setdefault(name, []).append(res)
        print(f"{name}: {res['wall_s']:.2f} s rc {res['rc']}", flush=True)

    record("new check --example, cache empty (first run)", check, new)
    record("new check --example --no-cache", [*check, "--no-cache"], new)
    record("new check --example --no-smoke", [*check, "--no-smoke"], new)
    record("old check --example", check, old)
    peers = {"accelerate env": ["accelerate", "env"],
             "collect_env": [py, "-m", "torch.utils.collect_env"],
             "ds_report": [py, "-c", "from deepspeed.env_report import cli_main; cli_main()"]}
    for _ in range(args.n):
        record("new check --example", check, new)
        record("new smoke", [*fp8, "smoke", "--format", "json"], new, keep=True)
        for name, argv in peers.items():
            record(name, argv, new)
    summary = {name: {"median_s": statistics.median(r["wall_s"] for r in rs),
                      "walls_s": [r["wall_s"] for r in rs]} for name, rs in runs.items()}
    verdicts = {name: [r.get("verdict") for r in rs] for name, rs in runs.items()
                if any("verdict" in r for r in rs)}
    def same(v: dict[str, Any] | None) -> dict[str, Any]:
        return {k: x for k, x in (v or {}).items()
                if k not in ("children", "bytecode_cache", "started_early", "duration_s")}
    ref = same(runs["old check --example"][0].get("verdict"))
    identical = all(same(v) == ref for name, vs in verdicts.items()
                    if name.startswith("new check") and "no-smoke" not in name for v in vs)
    doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "runs": runs,
           "summary": summary, "verdicts_identical_to_old": identical, "verdicts": verdicts,
           "env": {k: base.get(k) for k in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}}
    with open(os.path.join(args.out, "gpu_check.json"), "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
    for name, s in summary.items():
        print(f"{name:48} median {s['median_s']:.2f} s  {s['walls_s']}")
    print("verdicts identical to the old code:", identical)


if __name__ == "__main__":
    main()
