"""GPU: two versions of fp8-doctor side by side, with the bytecode cache filled (issue 26: the
check <= 5 s where bytecode exists).

    python benchmarks/gpu_ab.py --out DIR --a OLD_ROOT --b NEW_ROOT [-n 5] [--deadline S]

Both source trees run from ``PYTHONPATH`` (with ``--site``'s packages first) in fresh empty
folders, with one ``XDG_CACHE_HOME``. First B's ``check --example`` runs until its smoke details
say the cache is ``used`` (the filler child writes it; at most four runs), then one untimed run of
A. Then ``-n`` rounds of ``check --example`` and ``smoke`` (every installed backend) for A and B,
the order of A and B swapped every round, so that neither always runs first. Recorded per run:
the wall time, the children's seconds, each child's CUDA setup (``children_setup``, new in B),
the TE child's imports and stage laps, and the smoke verdicts, which must be the same for A and
B. Writes DIR/gpu_ab.json after every run and prints medians at the end. ``--compile`` gives both
trees their own bytecode first (``compileall``), as a pip-installed fp8-doctor has (``--wheels``:
install two wheels instead, which also ship the rule index a source tree lacks): without it the
doctor's parent process compiles its own modules on an image that sets
``PYTHONDONTWRITEBYTECODE=1``, which is not the "where bytecode exists" condition.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_check import VERDICT_KEYS, timed, verdict  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--a", required=True, help="the old code's source tree")
    ap.add_argument("--b", required=True, help="the new code's source tree")
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--deadline", type=float, default=None, help="seconds from the start")
    ap.add_argument("--site", default="/tmp/site")
    ap.add_argument("--peers", type=int, default=0,
                    help="in the first N rounds also accelerate env and collect_env")
    ap.add_argument("--cold", type=int, default=0,
                    help="N pairs at the end: B's first run on an empty cache, B --no-cache")
    ap.add_argument("--wheels", action="store_true",
                    help="--a and --b are wheel files: each is installed (pip --target, its "
                         "bytecode compiled, the rule index it ships) and run from there")
    ap.add_argument("--compile", action="store_true",
                    help="compile both trees' own bytecode first (the doctor itself then starts "
                         "as a pip-installed one does: 'where bytecode exists')")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.wheels:   # the installed condition: bytecode and the wheel's rule index
        for name in ("a", "b"):
            target = tempfile.mkdtemp(prefix=f"gpu-ab-{name}-")
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                            "--no-index", "--target", target, getattr(args, name)],
                           check=True, timeout=300)
            setattr(args, name, target)
    if args.compile:
        for root in (args.a, args.b):
            subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0",
                            os.path.join(root, "preflight")], check=False, timeout=300)
    t0 = time.monotonic()
    xdg = tempfile.mkdtemp(prefix="xdg-ab-")
    base = dict(os.environ)
    envs = {v: {**base, "PYTHONPATH": f"{args.site}:{root}", "XDG_CACHE_HOME": xdg}
            for v, root in (("A", args.a), ("B", args.b))}
    fp8 = [sys.executable, "-m", "preflight"]
    cmds = {"check --example": [*fp8, "check", "--example", "--format", "json"],
            "smoke": [*fp8, "smoke", "--format", "json"]}
    peers = {"accelerate env": ["accelerate", "env"],
             "collect_env": [sys.executable, "-m", "torch.utils.collect_env"]}
    extra = {"check --example --no-cache": [*cmds["check --example"], "--no-cache"]}
    doc: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           "a": args.a, "b": args.b, "runs": {}, "skipped": []}

    def record(name: str, version: str, estimate: float = 15.0) -> dict[str, Any] | None:
        if args.deadline is not None and time.monotonic() - t0 + estimate > args.deadline:
            doc["skipped"].append(f"{version} {name}")
            return None
        argv = {**cmds, **peers, **extra}[name]
        res = timed(argv, envs[version], timeout=300)
        out = res.pop("stdout")
        if name not in peers:
            res["verdict"] = verdict(out)
        doc["runs"].setdefault(f"{version} {name}", []).append(res)
        v = res.get("verdict") or {}
        print(f"{version} {name}: {res['wall_s']:.2f} s rc {res['rc']} children {v.get('children')} "
              f"cache {(v.get('bytecode_cache') or {}).get('status')}", flush=True)
        save()
        return res

    def save() -> None:
        summarize(doc)
        with open(os.path.join(args.out, "gpu_ab.json"), "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)

    for _ in range(4):
        res = record("check --example", "B", estimate=25)
        if res is None or ((res["verdict"].get("bytecode_cache") or {}).get("status")
                           not in ("filling",)):
            break
    doc["fill_runs"] = doc["runs"].pop("B check --example", [])
    warm_a = record("check --example", "A", estimate=20)
    if warm_a is not None:
        doc["runs"].pop("A check --example", None)
        doc["warm_a"] = warm_a
    for i in range(args.n):
        order = ("A", "B") if i % 2 == 0 else ("B", "A")
        for name in cmds:
            for version in order:
                record(name, version)
        if i < args.peers:
            for name in peers:
                record(name, "B", estimate=20)
    for _ in range(args.cold):
        envs["B cold"] = {**envs["B"], "XDG_CACHE_HOME": tempfile.mkdtemp(prefix="xdg-cold-")}
        record("check --example", "B cold", estimate=25)
        record("check --example --no-cache", "B", estimate=25)
    save()
    for name, s in doc["summary"].items():
        print(f"{name:28} median {s['median_s']:.2f} s  {s['walls_s']}")
    print("smoke verdicts identical A/B:", doc.get("smoke_verdicts_identical"))
    return 0


def summarize(doc: dict[str, Any]) -> None:
    runs: dict[str, list[dict[str, Any]]] = doc["runs"]
    doc["summary"] = {name: {"median_s": statistics.median(r["wall_s"] for r in rs),
                             "walls_s": [r["wall_s"] for r in rs]} for name, rs in runs.items()}
    for name, rs in runs.items():
        te = [((r.get("verdict") or {}).get("children") or {}).get("te") for r in rs]
        te = [x for x in te if isinstance(x, (int, float))]
        if te:
            doc["summary"][name]["te_child_median_s"] = statistics.median(te)

    def smoke_of(r: dict[str, Any]) -> dict[str, Any]:
        return {k: x for k, x in (r.get("verdict") or {}).items() if k in VERDICT_KEYS}

    for name in ("check --example", "smoke"):
        got = [smoke_of(r) for v in ("A", "B") for r in runs.get(f"{v} {name}", [])]
        if got:
            doc.setdefault("smoke_verdicts_identical", {})[name] = all(g == got[0] for g in got)


if __name__ == "__main__":
    sys.exit(main())
