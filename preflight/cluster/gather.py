"""Bring every rank's payload to rank 0 over torch.distributed, naming ranks that never answer.

A plain ``gather_object`` would hang the whole job on one dead rank, and gloo's own timeout error
does not say which rank it was. So the exchange has two steps, both on torch.distributed:

1. Roll call on the launcher's c10d store: each rank sets ``alive/<r>`` when it starts and
   ``ready/<r>`` when its payload is built; rank 0 waits (up to the deadline) and publishes a
   roster of the ranks that are ready. A rank missing from it is named, with whether it ever
   reached the rendezvous.
2. The ranks on the roster form a gloo process group (renumbered, so a missing rank cannot
   block it) and gather their payloads to rank 0 as JSON bytes. gloo works without GPUs.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from preflight.cluster.launch import RankInfo


@dataclass(frozen=True)
class Gathered:
    """What rank 0 received: payloads by rank, and the ranks that did not answer (with why)."""

    payloads: dict[int, dict[str, Any]]
    missing: dict[int, str]
    wait_seconds: float = 0.0       # rank 0 waiting for the others to be ready
    gather_seconds: float = 0.0     # gloo group set-up + gather
    timings: dict[str, float] = field(default_factory=dict)


class RankZeroSilent(Exception):
    """Rank 0 never published the roster (it crashed or hangs); this rank cannot report."""


class LateRank(Exception):
    """This rank was not on rank 0's roster (it was too slow); rank 0 reported it missing."""


def _keys(info: RankInfo) -> str:
    return f"fp8d/{info.run_id}/"


def announce(store: Any, info: RankInfo) -> None:
    """Mark this rank as started, so a rank that later hangs is told apart from one never seen."""
    store.set(_keys(info) + f"alive/{info.rank}", "1")


def shared_mask_key(store: Any, info: RankInfo) -> bytes | None:
    """Random bytes, the same on every rank of this run, for fingerprints of masked env values.

    Rank 0 makes them and puts them on the job's own store; the others wait for them there. The
    key never leaves the job, so the ``<masked:...>`` fingerprints in a report confirm no guess
    offline, yet equal secrets on two ranks still compare equal. None when the key cannot be
    read (rank 0 gone): the rank then masks with its own key, and the roster step that follows
    reports rank 0 as it does today.
    """
    name = _keys(info) + "mask_key"
    try:
        if info.rank == 0:
            store.set(name, secrets.token_hex(32))
        return bytes.fromhex(store.get(name).decode("ascii"))
    except Exception:  # noqa: BLE001 - DistStoreError / timeout: fall back, never fail here
        return None


def _roll_call(store: Any, info: RankInfo, deadline: float) -> tuple[list[int], dict[int, str]]:
    """Rank 0: wait until every rank is ready or the deadline passes; publish the roster."""
    pre = _keys(info)
    pause = 0.002
    while store.add(pre + "ready_count", 0) < info.world_size and time.monotonic() < deadline:
        time.sleep(pause)
        pause = min(pause * 2, 0.1)
    present, missing = [], {}
    for r in range(info.world_size):
        if store.check([pre + f"ready/{r}"]):
            present.append(r)
        elif store.check([pre + f"alive/{r}"]):
            missing[r] = "started but did not finish collecting its facts before the timeout"
        else:
            missing[r] = "never reached the rendezvous (exited early, crashed or not started)"
    store.set(pre + "roster", json.dumps(present))
    return present, missing


def gather_json(obj: Any, *, dst_is_me: bool, size: int) -> list[Any]:
    """``gather_object`` for JSON values, to group rank 0 over the default (gloo) group.

    Not ``gather_object`` itself: it unpickles what other ranks send (a pickle is code) and in
    torch 2.13 decodes through ``tensor.numpy()``, so it fails where numpy is not installed.
    """
    import torch
    import torch.distributed as dist

    data = json.dumps(obj, separators=(",", ":")).encode()
    sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(size)]
    dist.all_gather(sizes, torch.tensor([len(data)], dtype=torch.int64))
    longest = max(int(s.item()) for s in sizes)
    mine = torch.zeros(longest, dtype=torch.uint8)
    mine[: len(data)] = torch.frombuffer(bytearray(data), dtype=torch.uint8)
    bufs = [torch.empty(longest, dtype=torch.uint8) for _ in range(size)] if dst_is_me else None
    dist.gather(mine, bufs, dst=0)
    if not dst_is_me or bufs is None:
        return []
    return [json.loads(bytes(b.untyped_storage())[: int(n.item())]) for b, n in zip(bufs, sizes)]


def exchange(store: Any, info: RankInfo, payload: dict[str, Any], deadline: float
             ) -> Gathered | None:
    """Send ``payload`` to rank 0; rank 0 returns everything it got, other ranks None.

    ``deadline`` is a ``time.monotonic()`` value: rank 0 stops waiting for stragglers then.
    Raises :class:`LateRank` on a rank that became ready after the roster was published.
    """
    import torch.distributed as dist

    pre = _keys(info)
    store.set(pre + f"ready/{info.rank}", "1")
    store.add(pre + "ready_count", 1)
    t0 = time.monotonic()
    if info.rank == 0:
        present, missing = _roll_call(store, info, deadline)
    else:
        # Rank 0 publishes the roster by its deadline; allow for clocks started a little apart.
        wait = max(deadline - time.monotonic(), 0.0) + 30.0
        try:
            store.wait([pre + "roster"], timedelta(seconds=wait))
        except Exception as exc:  # noqa: BLE001 - DistStoreError / timeout: say who is missing
            raise RankZeroSilent(f"rank 0 published no roster within {wait:.0f}s "
                                 f"({type(exc).__name__}); see rank 0's log") from None
        present = json.loads(store.get(pre + "roster"))
        missing = {}
        if info.rank not in present:
            raise LateRank(f"rank {info.rank} was ready after rank 0's deadline")
    t1 = time.monotonic()

    group_rank = present.index(info.rank)
    timeout = timedelta(seconds=max(deadline - time.monotonic(), 0.0) + 30.0)
    dist.init_process_group("gloo", store=dist.PrefixStore(pre + "pg", store),
                            rank=group_rank, world_size=len(present), timeout=timeout)
    t_init = time.monotonic()
    try:
        received = gather_json(payload, dst_is_me=info.rank == 0, size=len(present))
    finally:
        dist.destroy_process_group()
    t2 = time.monotonic()
    if info.rank != 0:
        return None
    by_rank = {int(p["rank"]): p for p in received if isinstance(p, dict)}
    return Gathered(by_rank, missing, wait_seconds=t1 - t0, gather_seconds=t2 - t1,
                    timings={"group_init_s": t_init - t1, "gather_only_s": t2 - t_init})
