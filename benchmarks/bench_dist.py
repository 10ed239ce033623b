"""Aggregation time of ``python -m preflight.cluster``: roll call + gloo gather + merge on rank 0.

Process start, torch import and fact collection are excluded: each job first builds its payload,
then runs the exchange ``--iters`` times (each with a fresh roll call and a fresh gloo group, as
one real run does) and rank 0 reports the times. The payload is synthetic but shaped and sized
like a real one (``--facts`` facts, a few per-rank differences), so the numbers do not depend on
what the probes of this machine find.

    python benchmarks/bench_dist.py --nproc 4 16          # driver: one torchrun job per size
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def synthetic_payload(rank: int, local_rank: int, n_facts: int) -> dict[str, Any]:
    facts: dict[str, Any] = {f"pkg.dist-{i}.version": f"1.{i % 7}.0" for i in range(n_facts - 12)}
    facts.update({"pkg.torch.version": "2.13.0", "host.python": "3.11.7",
                  "pkg.transformer-engine.version": "2.8.0" if rank % 5 else "2.7.0",
                  "gpu.names": ["NVIDIA H100 80GB HBM3"] * 8, "gpu.ccs": ["9.0"] * 8,
                  "gpu.driver": "580.95.05", "gpu.cuda_driver": "13.0", "cuda.torch_build": "12.8",
                  "gpu.count": 8, "host.cpu_count": 96, "host.shm_bytes": 2**36,
                  "smoke.ran": False})
    env = {"NCCL_DEBUG": "WARN", "NVTE_FLASH_ATTN": "1"}
    if rank == 3:
        env["NCCL_ALGO"] = "Ring"
    return {"rank": rank, "local_rank": local_rank, "host": socket.gethostname(),
            "launcher": "torchrun", "pid": os.getpid(), "env": env, "facts": facts,
            "device": {"entry": str(local_rank), "key": f"index:{local_rank}", "index": local_rank},
            "smoke": None, "error": None, "collectives": None}


def worker(iters: int, n_facts: int) -> None:
    from preflight.cluster.gather import announce, exchange
    from preflight.cluster.launch import open_store, rank_info
    from preflight.cluster.merge import merge

    info = rank_info()
    store = open_store(info, 120)
    payload = synthetic_payload(info.rank, info.local_rank, n_facts)
    samples = []
    for i in range(iters):
        it = replace(info, run_id=f"{info.run_id}-bench{i}")
        announce(store, it)
        got = exchange(store, it, payload, time.monotonic() + 120)
        if got is None:
            continue
        t0 = time.perf_counter()
        view = merge(got.payloads, got.missing, info.world_size)
        merge_s = time.perf_counter() - t0
        assert len(view.facts["cluster.diff.packages"]) == (1 if info.world_size > 1 else 0)
        samples.append({"wait_s": got.wait_seconds, "gather_s": got.gather_seconds,
                        "merge_s": merge_s, **got.timings})
    store_s = [store_only(store, info, payload, i) for i in range(iters)]
    if info.rank == 0:
        size = len(json.dumps(payload))
        print("BENCH " + json.dumps({"world": info.world_size, "payload_bytes": size,
                                     "samples": samples, "store_only_s": store_s}), flush=True)


def store_only(store: Any, info: Any, payload: dict[str, Any], i: int) -> float:
    """For comparison only: the same gather through the c10d store alone (no gloo group)."""
    from datetime import timedelta

    pre = f"fp8d/{info.run_id}/storebench{i}/"
    store.add(pre + "n", 1)
    while store.add(pre + "n", 0) < info.world_size:
        time.sleep(0.001)
    t0 = time.perf_counter()
    store.set(pre + f"p/{info.rank}", json.dumps(payload))
    if info.rank != 0:
        return 0.0
    keys = [pre + f"p/{r}" for r in range(info.world_size)]
    store.wait(keys, timedelta(seconds=60))
    got = [json.loads(b) for b in store.multi_get(keys)]
    assert len(got) == info.world_size
    return time.perf_counter() - t0


def driver(sizes: list[int], iters: int, n_facts: int) -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    print(f"# {socket.gethostname()} cpus={os.cpu_count()} python={sys.version.split()[0]} "
          f"{time.strftime('%Y-%m-%d %H:%M %Z')}")
    print("| processes | payload bytes | gloo group init, median ms | gather, median ms "
          "| merge, median ms | gather+merge (incl. init), median ms | max ms "
          "| store-only gather, median ms |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        cmd = [sys.executable, "-W", "ignore", "-m", "torch.distributed.run", "--nproc-per-node",
               str(n), "--master-port", str(port), __file__, "--worker", "--iters", str(iters),
               "--facts", str(n_facts)]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("BENCH ")), None)
        if proc.returncode or line is None:
            print(proc.stderr[-2000:], file=sys.stderr)
            return 1
        res = json.loads(line[6:])
        # The first exchange also warms up gloo's connection code; report it in max only.
        total = [s["gather_s"] + s["merge_s"] for s in res["samples"]]
        med = lambda k: statistics.median(s[k] for s in res["samples"]) * 1e3  # noqa: E731
        print(f"| {n} | {res['payload_bytes']} | {med('group_init_s'):.1f} | "
              f"{med('gather_only_s'):.1f} | {med('merge_s'):.1f} | "
              f"{statistics.median(total) * 1e3:.1f} | {max(total) * 1e3:.1f} | "
              f"{statistics.median(res['store_only_s']) * 1e3:.1f} |", flush=True)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nproc", type=int, nargs="+", default=[4, 16])
    p.add_argument("--iters", type=int, default=7)
    p.add_argument("--facts", type=int, default=250, help="facts per rank payload")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args.iters, args.facts)
        return 0
    return driver(args.nproc, args.iters, args.facts)


if __name__ == "__main__":
    raise SystemExit(main())
