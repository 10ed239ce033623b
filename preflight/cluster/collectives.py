"""``--collectives``: an all-reduce and a uint8 all-gather across every rank, in a child process.

The all-gather moves uint8 tensors because that is what FP8 all-gather sends (FSDP2 float8 and
Transformer Engine gather the raw FP8 bytes as uint8). Each rank runs the collectives in a child
process joined through the launcher's c10d store, with a timeout: an NCCL hang or a watchdog
abort becomes a result ("timeout" / "failed" with the reason) instead of a hung or killed doctor.
Results are checked exactly (sums of small integers, byte patterns), then timed.

A job of one (no launcher, or ``--nproc-per-node 1``) has no store to join: the child keeps its
own in-process store and runs the collectives on its one rank, which still proves the backend
initialises and moves the bytes. A failure is reported as one line (the exception's last line);
the child's traceback goes to the rank's stderr, never into a finding.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Sequence
from typing import Any

from preflight.base import isolate, proc
from preflight.cluster.launch import RankInfo

_ENV = "FP8D_COLLECTIVES"
# The child's own timeout is timeout_s (c10d store and process group); this margin covers the
# interpreter and torch start-up before the parent gives up on it.
MARGIN_S = 15.0
# A finding message holds one line per rank, not a traceback.
ERROR_CHARS = 300
# How much of the child's stderr travels back as ``detail`` (logged on the rank, not reported).
DETAIL_CHARS = 4000


def summarize_error(text: str) -> str:
    """One line for a finding from a child's stderr (or an exception's text)."""
    return proc.error_line(text, ERROR_CHARS)


def _failed(backend: str, error: str, stderr: str = "") -> dict[str, Any]:
    return _with_detail({"status": "failed", "backend": backend, "error": error}, stderr)


def _with_detail(result: dict[str, Any], stderr: str) -> dict[str, Any]:
    if stderr.strip():
        result["detail"] = stderr.strip()[-DETAIL_CHARS:]
    return result


def run(info: RankInfo, *, timeout_s: float, backend: str = "nccl", mib: int = 16,
        argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the collectives for this rank in a child process; never raises.

    ``argv`` replaces the child command (tests); the child reads its spec from ``FP8D_COLLECTIVES``
    and prints one JSON object as its last ``{`` line.
    """
    spec = {"rank": info.rank, "world_size": info.world_size, "local_rank": info.local_rank,
            "addr": info.master_addr or os.environ.get("MASTER_ADDR", "127.0.0.1"),
            "port": info.master_port or int(os.environ.get("MASTER_PORT", "29500")),
            "prefix": f"fp8d/{info.run_id}/coll", "backend": backend, "mib": mib,
            "timeout": timeout_s}
    env = isolate.python_env(extra={_ENV: json.dumps(spec)})
    limit = timeout_s + MARGIN_S
    # proc.run: the child leads its own process group, so a timeout also kills whatever it
    # started (subprocess.run would kill only the child itself).
    res = proc.run(list(argv or isolate.python_argv("-m", "preflight.cluster.collectives")), limit,
                   env=env)
    if res.error:
        return _failed(backend, f"could not start the collectives child: "
                                f"{summarize_error(res.error)}")
    if res.timed_out:
        out = _failed(backend, f"no result within {limit:.0f}s (a rank never joined, or a "
                               "collective hung)", res.stderr)
        out["status"] = "timeout"
        return out
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    if res.returncode == 0 and lines:
        try:
            result = json.loads(lines[-1])
        except ValueError as exc:
            result = exc
        if not isinstance(result, dict):
            return _failed(backend, f"unreadable result from the collectives child "
                                    f"({summarize_error(str(result))}): {lines[-1][:200]}",
                           res.stderr)
        result["seconds"] = round(res.seconds, 3)
        if result.get("status") not in ("ok", "skipped"):
            _with_detail(result, res.stderr)
        return result
    return _failed(backend, f"child exited with {res.returncode}: "
                            f"{summarize_error(res.stderr) or 'no output'}", res.stderr)


def _timed(fn: Any, sync: Any, iters: int = 5) -> float:
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - start) / iters


def _child(spec: dict[str, Any]) -> dict[str, Any]:
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    backend = spec["backend"]
    rank, world = int(spec["rank"]), int(spec["world_size"])
    timeout = timedelta(seconds=float(spec["timeout"]))
    if backend == "nccl":
        if not torch.cuda.is_available():
            return {"status": "skipped", "backend": backend, "error": "no CUDA device visible"}
        if spec["local_rank"] >= torch.cuda.device_count():
            return {"status": "failed", "backend": backend,
                    "error": f"LOCAL_RANK {spec['local_rank']} but {torch.cuda.device_count()} "
                             "visible GPU(s)"}
        device = torch.device("cuda", int(spec["local_rank"]))
        torch.cuda.set_device(device)
        sync = torch.cuda.synchronize
    else:
        device, sync = torch.device("cpu"), (lambda: None)
    if world == 1:
        # A job of one has no launcher store to join (nothing listens on MASTER_PORT): keep an
        # in-process store; the collectives then run for real on this one rank.
        store = dist.HashStore()
    else:
        store = dist.TCPStore(spec["addr"], int(spec["port"]), is_master=False,
                              timeout=timeout)
    dist.init_process_group(backend, store=dist.PrefixStore(spec["prefix"], store), rank=rank,
                            world_size=world, timeout=timeout)
    try:
        n = int(spec["mib"]) * 2**20
        # all-reduce: float32 rank+1 everywhere -> exactly world*(world+1)/2 (small integers).
        x = torch.full((n // 4,), float(rank + 1), device=device, dtype=torch.float32)
        dist.all_reduce(x)
        sync()
        reduce_ok = bool(torch.all(x == world * (world + 1) / 2).item())
        reduce_s = _timed(lambda: dist.all_reduce(x), sync)
        # all-gather of uint8 (the FP8 all-gather wire format): rank-dependent byte pattern.
        part = ((torch.arange(n, device=device) + 31 * rank) % 256).to(torch.uint8)
        out = torch.empty(world * n, dtype=torch.uint8, device=device)
        dist.all_gather_into_tensor(out, part)
        sync()
        expect = torch.cat([((torch.arange(n, device=device) + 31 * r) % 256).to(torch.uint8)
                            for r in range(world)])
        gather_ok = bool(torch.equal(out, expect))
        gather_s = _timed(lambda: dist.all_gather_into_tensor(out, part), sync)
    finally:
        dist.destroy_process_group()
    # nccl-tests' bus bandwidth: all-reduce moves 2(n-1)/n of the data, all-gather (n-1)/n;
    # on one rank nothing crosses a link, so it is 0 there too (a copy speed is no bandwidth).
    frac = (world - 1) / world
    return {
        "status": "ok" if reduce_ok and gather_ok else "failed",
        "backend": backend, "bytes": n,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "all_reduce": {"ok": reduce_ok, "seconds": reduce_s,
                       "busbw_gbps": round(2 * frac * n / reduce_s / 1e9, 2)},
        "all_gather_uint8": {"ok": gather_ok, "seconds": gather_s,
                             "busbw_gbps": round(frac * world * n / gather_s / 1e9, 2)},
        "error": None if reduce_ok and gather_ok else "wrong values after the collective",
    }


def merge_results(results: dict[int, dict[str, Any] | None]) -> dict[str, Any]:
    """``cluster.collectives.*`` facts from each rank's result (rank 0's timings are shown)."""
    ran = {r: v for r, v in results.items() if v}
    if not ran:
        return {}
    bad = sorted(r for r, v in ran.items() if v.get("status") not in ("ok", "skipped"))
    statuses = {v.get("status") for v in ran.values()}
    status = ("ok" if statuses == {"ok"} else "skipped" if statuses == {"skipped"}
              else "timeout" if "timeout" in statuses else "failed")
    facts: dict[str, Any] = {"cluster.collectives.status": status,
                             "cluster.collectives.failed_ranks": bad,
                             "cluster.collectives.backend":
                                 str(next(iter(ran.values())).get("backend"))}
    errors = [f"rank {r}: {ran[r].get('error')}" for r in bad]
    skipped = [v.get("error") for v in ran.values() if v.get("status") == "skipped"]
    if errors or skipped:
        facts["cluster.collectives.error"] = "; ".join(errors) or str(skipped[0])
    first = ran[min(ran)]
    for op in ("all_reduce", "all_gather_uint8"):
        if isinstance(first.get(op), dict):
            facts[f"cluster.collectives.{op}.busbw_gbps"] = first[op]["busbw_gbps"]
            facts[f"cluster.collectives.{op}.ok"] = all(
                (v.get(op) or {}).get("ok", False) for v in ran.values())
    if first.get("bytes"):
        facts["cluster.collectives.bytes"] = first["bytes"]
    return facts


def main() -> int:
    """Child entry point: read the spec from the environment, print one JSON line."""
    spec = json.loads(os.environ[_ENV])
    try:
        result = _child(spec)
    except Exception as exc:  # noqa: BLE001 - the parent reports one line; the detail is stderr
        traceback.print_exc(file=sys.stderr)
        text = f"{type(exc).__name__}: {exc}"
        result = {"status": "failed", "backend": spec.get("backend"),
                  "error": summarize_error(text)}
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
