"""GPU: the full check's wall time (issue 26, item 1) next to its peers, and the old code's.

    python benchmarks/gpu_check.py --out DIR --new NEW_ROOT [--old OLD_ROOT] [-n 3] [--cold 2]
                                   [--deadline SECONDS]

Every command runs in a fresh empty folder with the environment as the machine gives it (the
GPU image sets ``PYTHONDONTWRITEBYTECODE=1`` and its packages hold no bytecode), fp8-doctor from
a source tree on ``PYTHONPATH`` (NEW_ROOT: this branch; OLD_ROOT: the code before the speed
work, e.g. commit 3a18a5b unpacked). The bytecode cache lives in a fresh ``XDG_CACHE_HOME``.

Timed, in this order:

1. ``check --example`` on an empty cache (a first run on a machine), ``--cold`` times, each with
   a fresh cache folder, interleaved with ``check --example --no-cache``: since 2026-11-27 a
   cold cache must cost nothing (the children run as with ``--no-cache``; a low-priority filler
   writes the cache beside them, smoke/cache.py); ``--cold-extra`` more pairs at the very end,
   where the deadline leaves time;
2. ``--no-smoke`` (the static part) and the old code's ``check --example``;
3. the filling: ``check --example`` and ``smoke`` (every installed backend) again until the
   smoke details say the cache is ``used`` (at most four runs each), each run recorded;
4. ``-n`` interleaved rounds of ``check --example`` and ``smoke`` with the cache filled,
   ``accelerate env``, ``python -m torch.utils.collect_env`` and ``ds_report``.

The new and old ``check --example`` smoke verdicts are compared (they must be identical), and
apart from them the findings (rules merged since the old commit may change those). DIR/gpu_check.json is rewritten after every run, so a run cut short by
``--deadline`` (seconds from the start: no run starts when the estimate of it would end past it)
or by a kill keeps what was measured. Prints a table at the end.
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
                "smoke.te.ckpt_scale_drift", "smoke.te.train_ok", "smoke.torchao.engaged",
                "smoke.torchao.resume_status", "smoke.torchao.train_ok")
NEW_FACTS = ("smoke.te.gemm_flops_share", "smoke.torchao.gemm_flops_share")
"""Facts the old code does not have: recorded, not compared."""


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
    te = (smoke.get("backends") or {}).get("te") or {}
    return {"findings": sorted(f["id"] for f in doc.get("findings", [])),
            "exit_code": doc.get("exit_code"),
            **{k: facts.get(k) for k in VERDICT_KEYS if k in facts},
            "children": smoke.get("children"), "bytecode_cache": smoke.get("bytecode_cache"),
            "children_setup": smoke.get("children_setup"),
            "started_early": smoke.get("started_early"), "duration_s": smoke.get("duration_s"),
            "import_s": {k: smoke.get(f"{k}_import_s") for k in ("torch", "torchao", "te")},
            "te_timings": te.get("timings"), "te_stage_s": te.get("seconds"),
            "new_facts": {k: facts.get(k) for k in NEW_FACTS if k in facts}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--old", default="", help="the old code's source tree ('': not run)")
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--cold", type=int, default=1,
                    help="pairs of a first run on an empty cache and a --no-cache run")
    ap.add_argument("--cold-extra", type=int, default=1,
                    help="more such pairs at the end, where the deadline leaves time")
    ap.add_argument("--deadline", type=float, default=None,
                    help="seconds from the start after which no run starts")
    ap.add_argument("--site", default="/tmp/site")
    args = ap.parse_args()
    t_start = time.monotonic()
    py = sys.executable
    base = dict(os.environ)

    def env_for(root: str, xdg: str) -> dict[str, str]:
        return {**base, "PYTHONPATH": f"{args.site}:{root}", "XDG_CACHE_HOME": xdg}

    xdg = tempfile.mkdtemp(prefix="xdg-")
    new, old = env_for(args.new, xdg), env_for(args.old, xdg)
    fp8 = [py, "-m", "preflight"]
    check = [*fp8, "check", "--example", "--format", "json"]
    smoke = [*fp8, "smoke", "--format", "json"]
    runs: dict[str, list[dict[str, Any]]] = {}
    skipped: list[str] = []
    doc: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           "runs": runs, "skipped": skipped,
                           "env": {k: base.get(k) for k in ("PYTHONDONTWRITEBYTECODE",
                                                            "PYTHONPYCACHEPREFIX")}}

    def save() -> None:
        summarize(doc)
        with open(os.path.join(args.out, "gpu_check.json"), "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)

    def record(name: str, argv: list[str], env: dict[str, str], keep: bool = False,
               estimate: float = 20.0) -> dict[str, Any] | None:
        if args.deadline is not None and time.monotonic() - t_start + estimate > args.deadline:
            skipped.append(name)
            print(f"{name}: skipped (deadline)", flush=True)
            return None
        left = None if args.deadline is None else args.deadline - (time.monotonic() - t_start)
        res = timed(argv, env, timeout=300 if left is None else max(10.0, min(300.0, left)))
        if keep or name.startswith(("new check", "old check", "new smoke")):
            res["verdict"] = verdict(res["stdout"])
        res.pop("stdout")
        runs.setdefault(name, []).append(res)
        cache = (res.get("verdict") or {}).get("bytecode_cache") or {}
        print(f"{name}: {res['wall_s']:.2f} s rc {res['rc']}"
              f"{'  cache ' + str(cache.get('status')) if cache else ''}"
              f"{' (' + str(cache.get('filler')) + ')' if cache.get('filler') else ''}",
              flush=True)
        save()
        return res

    def cold_pair() -> None:   # each first run with a cache folder of its own
        fresh = env_for(args.new, tempfile.mkdtemp(prefix="xdg-cold-"))
        record("new check --example, first run (cache empty)", check, fresh, estimate=25)
        record("new check --example --no-cache", [*check, "--no-cache"], new, estimate=25)

    for _ in range(max(args.cold, 1)):
        cold_pair()
    record("new check --example --no-smoke", [*check, "--no-smoke"], new, estimate=5)
    if args.old:
        record("old check --example", check, old, estimate=25)
    for name, argv in (("new check --example", check), ("new smoke", smoke)):
        for _ in range(4):   # the filler finishes in one of these; then the cache is read
            res = record(f"{name}, cache filling", argv, new, estimate=25)
            status = ((res or {}).get("verdict") or {}).get("bytecode_cache") or {}
            if res is None or status.get("status") != "filling":
                break
    peers = {"accelerate env": ["accelerate", "env"],
             "collect_env": [py, "-m", "torch.utils.collect_env"],
             "ds_report": [py, "-c", "from deepspeed.env_report import cli_main; cli_main()"]}
    for _ in range(args.n):
        record("new check --example", check, new, estimate=12)
        record("new smoke", smoke, new, estimate=12)
        for name, argv in peers.items():
            record(name, argv, new, estimate=18)
    for _ in range(args.cold_extra):
        cold_pair()
    save()
    for name, s in doc["summary"].items():
        print(f"{name:52} median {s['median_s']:.2f} s  {s['walls_s']}")
    print("smoke verdicts identical to the old code:", doc["smoke_verdicts_identical_to_old"])
    print("findings identical to the old code:", doc["findings_identical_to_old"])
    if skipped:
        print("skipped (deadline):", ", ".join(skipped))


def summarize(doc: dict[str, Any]) -> None:
    """Medians per command; whether every new check --example gave the old code's verdict."""
    runs: dict[str, list[dict[str, Any]]] = doc["runs"]
    doc["summary"] = {name: {"median_s": statistics.median(r["wall_s"] for r in rs),
                             "walls_s": [r["wall_s"] for r in rs]} for name, rs in runs.items()}
    verdicts = {name: [r.get("verdict") for r in rs] for name, rs in runs.items()
                if any("verdict" in r for r in rs)}
    doc["verdicts"] = verdicts

    def smoke_of(v: dict[str, Any] | None) -> dict[str, Any]:
        return {k: x for k, x in (v or {}).items() if k in VERDICT_KEYS}

    def findings_of(v: dict[str, Any] | None) -> Any:
        return ((v or {}).get("findings"), (v or {}).get("exit_code"))

    olds = [r.get("verdict") for r in runs.get("old check --example") or []]
    news = [v for name, vs in verdicts.items()
            if name.startswith("new check") and "no-smoke" not in name for v in vs]
    # The smoke verdicts are what this work must keep; the findings can also differ through
    # rule changes merged since the old commit (knowledge's truth fixes), so they are apart.
    doc["smoke_verdicts_identical_to_old"] = None if not olds else all(
        smoke_of(v) == smoke_of(olds[0]) for v in news)
    doc["findings_identical_to_old"] = None if not olds else all(
        findings_of(v) == findings_of(olds[0]) for v in news)


if __name__ == "__main__":
    main()
