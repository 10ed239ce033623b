"""Bring every rank's payload to rank 0 over torch.distributed, naming ranks that never answer.

A plain ``gather_object`` would hang the whole job on one dead rank, and gloo's own timeout error
does not say which rank it was. So the exchange has two steps, both on torch.distributed:

1. Roll call on the launcher's c10d store: each rank sets ``alive/<r>`` when it starts and
   ``ready/<r>`` when its payload is built (and appends its number to one list key for each, so
   rank 0 reads who came in one round trip, not one per rank); rank 0 waits (up to the deadline)
   and publishes a roster of the ranks that are ready. A rank missing from it is named, with
   whether it ever reached the rendezvous.
2. The ranks on the roster form a gloo process group (renumbered, so a missing rank cannot
   block it) and send their payloads to rank 0 as JSON bytes, each at most
   ``payload.MAX_PAYLOAD_BYTES`` and received into a buffer of its own size (issue 21 item 7: a
   200 MB payload grew every rank's buffer to 200 MB). The group's timeout is
   :data:`EXCHANGE_S`, not what is left of ``--timeout``: every rank on the roster is ready, so a
   rank that dies now costs that long, and rank 0 still reports (every roster rank it did not
   hear from is a row). gloo works without GPUs.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from preflight.base.digits import ascii_int
from preflight.cluster.launch import RankInfo
from preflight.cluster.payload import Refused, accept, encode

EXCHANGE_S = 45.0
"""How long the roster's gloo group may take to form and move the payloads."""


@dataclass(frozen=True)
class Gathered:
    """What rank 0 received: payloads by rank, and the ranks that did not answer (with why)."""

    payloads: dict[int, dict[str, Any]]
    missing: dict[int, str]           # rank -> why no payload of it is here
    wait_seconds: float = 0.0       # rank 0 waiting for the others to be ready
    gather_seconds: float = 0.0     # gloo group set-up + gather
    timings: dict[str, float] = field(default_factory=dict)


class RankZeroSilent(Exception):
    """Rank 0 never published the roster (it crashed or hangs); this rank cannot report."""


class LateRank(Exception):
    """This rank was not on rank 0's roster (it was too slow); rank 0 reported it missing."""


def _keys(info: RankInfo) -> str:
    return f"fp8d/{info.run_id}/"


def _mark(store: Any, info: RankInfo, what: str) -> None:
    pre = _keys(info)
    store.set(pre + f"{what}/{info.rank}", "1")
    try:
        store.append(pre + f"{what}_list", f"{info.rank},")
    except (AttributeError, RuntimeError, NotImplementedError):   # a store without append
        pass


def announce(store: Any, info: RankInfo) -> None:
    """Mark this rank as started, so a rank that later hangs is told apart from one never seen."""
    _mark(store, info, "alive")


def _listed(store: Any, info: RankInfo, what: str) -> set[int] | None:
    """The ranks that appended themselves to ``<what>_list``; None when the store cannot say
    (no append): then each rank's key is checked instead."""
    key = _keys(info) + f"{what}_list"
    try:
        if not store.check([key]):   # get() would wait for it: ask rank by rank instead
            return None
        raw = store.get(key).decode("ascii", "replace")
    except Exception:  # noqa: BLE001 - a store that cannot say: ask rank by rank
        return None
    out = set()
    for item in raw.split(","):
        rank = ascii_int(item)
        if rank is not None and rank < info.world_size:
            out.add(rank)
    return out


def status(store: Any, info: RankInfo) -> tuple[list[int], dict[int, str]]:
    """(ranks ready, {rank: why it is not}) as the store shows them now; never waits."""
    ready, alive = _listed(store, info, "ready"), _listed(store, info, "alive")
    pre = _keys(info)

    def has(what: str, listed: set[int] | None, r: int) -> bool:
        return r in listed if listed is not None else bool(store.check([pre + f"{what}/{r}"]))

    present, missing = [], {}
    for r in range(info.world_size):
        if has("ready", ready, r):
            present.append(r)
        elif has("alive", alive, r):
            missing[r] = "started but did not finish collecting its facts before the timeout"
        else:
            missing[r] = "never reached the rendezvous (exited early, crashed or not started)"
    return present, missing


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
    present, missing = status(store, info)
    if 0 not in present:          # rank 0 is here, whatever another rank wrote to the list
        present, missing = [0, *present], {r: why for r, why in missing.items() if r != 0}
    store.set(pre + "roster", json.dumps(present))
    return present, missing


def send_payloads(data: bytes, *, me: int, size: int, timeout: timedelta
                  ) -> tuple[dict[int, bytes], dict[int, str]]:
    """Every member sends ``data`` to member 0 over the default (gloo) group.

    Member 0 returns ({member: bytes received}, {member: why nothing usable came}); the others
    ({}, {}). Sizes are exchanged first (all_gather of one int each); each payload then travels
    point to point into a buffer of its own announced size, refused past the cap, so one rank's
    flood costs rank 0 nothing and the others' payloads still arrive. Not ``gather_object``: it
    unpickles what other ranks send (a pickle is code) and needs numpy in torch 2.13.
    """
    import torch
    import torch.distributed as dist

    from preflight.cluster.payload import MAX_PAYLOAD_BYTES

    sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(size)]
    dist.all_gather(sizes, torch.tensor([len(data)], dtype=torch.int64))
    announced = [int(s.item()) for s in sizes]
    if me != 0:
        if 0 < len(data) <= MAX_PAYLOAD_BYTES:
            dist.send(torch.frombuffer(bytearray(data), dtype=torch.uint8), dst=0)
        return {}, {}
    got: dict[int, bytes] = {}
    bad: dict[int, str] = {}
    pending = []
    for member in range(1, size):
        n = announced[member]
        if not 0 < n <= MAX_PAYLOAD_BYTES:
            bad[member] = f"it announced {n:,} bytes (the cap is {MAX_PAYLOAD_BYTES:,})"
            continue
        buf = torch.empty(n, dtype=torch.uint8)
        pending.append((member, buf, dist.irecv(buf, src=member)))
    end = time.monotonic() + timeout.total_seconds()   # one deadline for all, not one each
    for member, buf, work in pending:
        try:
            work.wait(timedelta(seconds=max(end - time.monotonic(), 0.01)))
            got[member] = bytes(buf.untyped_storage())[: buf.numel()]
        except Exception as exc:  # noqa: BLE001 - gloo: the member died or never sent
            bad[member] = f"its payload never arrived ({type(exc).__name__})"
    return got, bad


def _roster(raw: Any, world_size: int) -> list[int]:
    """The roster read from the job's store: distinct ranks of this world, rank 0 first.

    Any rank can write the store: red team (issue 21 item 7), a rank that wrote ``x`` or
    ``[5, 0, 1]`` there before rank 0 made the others fail with an internal error (or wait
    45 s for a rank 5 that does not exist). Raises :class:`RankZeroSilent` for anything else."""
    try:
        present = json.loads(raw)
    except (ValueError, TypeError, RecursionError):
        present = None
    if not (isinstance(present, list) and present and present[0] == 0
            and all(isinstance(r, int) and not isinstance(r, bool) and 0 <= r < world_size
                    for r in present) and len(set(present)) == len(present)):
        raise RankZeroSilent(f"the roster on the job's store is not one rank 0 writes "
                             f"({str(raw)[:80]!r}): another rank wrote it")
    return present


def exchange(store: Any, info: RankInfo, payload: dict[str, Any], deadline: float
             ) -> Gathered | None:
    """Send ``payload`` to rank 0; rank 0 returns everything it got, other ranks None.

    ``deadline`` is a ``time.monotonic()`` value: rank 0 stops waiting for stragglers then.
    Raises :class:`LateRank` on a rank that became ready after the roster was published.
    """
    import torch.distributed as dist

    pre = _keys(info)
    _mark(store, info, "ready")
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
        present = _roster(store.get(pre + "roster"), info.world_size)
        missing = {}
        if info.rank not in present:
            raise LateRank(f"rank {info.rank} was ready after rank 0's deadline")
    t1 = time.monotonic()

    group_rank = present.index(info.rank)
    timeout = timedelta(seconds=EXCHANGE_S)
    data = encode(payload)
    t_init = t1
    received: dict[int, bytes] = {}
    failed: dict[int, str] = {}
    try:
        dist.init_process_group("gloo", store=dist.PrefixStore(pre + "pg", store),
                                rank=group_rank, world_size=len(present), timeout=timeout)
        t_init = time.monotonic()
        try:
            received, failed = send_payloads(data, me=group_rank, size=len(present),
                                              timeout=timeout)
        finally:
            dist.destroy_process_group()
    except Exception as exc:  # noqa: BLE001 - a rank of the roster died or hung in the exchange
        if info.rank != 0:
            # a peer's fault (rank 0 gone, a rank of the roster that never joined): one line
            # and exit 1 on this rank, never "internal error" (red team, issue 21 item 7)
            raise RankZeroSilent(f"the exchange with rank 0 failed ({type(exc).__name__}: "
                                 f"{str(exc)[:200]})") from None
        why = (f"was ready, but the exchange with rank 0 failed ({type(exc).__name__}: "
               f"{str(exc)[:200]}): a rank died or hung during it")
        failed = {m: why for m in range(1, len(present)) if m not in received}
    t2 = time.monotonic()
    if info.rank != 0:
        return None
    by_rank: dict[int, dict[str, Any]] = {0: accept(data, 0, len(data))}
    for member, raw in received.items():
        try:
            by_rank[present[member]] = accept(raw, present[member], len(raw))
        except Refused as exc:
            failed[member] = f"answered, but rank 0 refused its payload: {exc}"
    for member, why in failed.items():
        missing[present[member]] = why
    return Gathered(by_rank, dict(sorted(missing.items())), wait_seconds=t1 - t0,
                    gather_seconds=t2 - t1,
                    timings={"group_init_s": t_init - t1, "gather_only_s": t2 - t_init})
