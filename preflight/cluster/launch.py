"""Where this process sits in the job: rank, world size, node-local rank and its GPU slot.

Reads what the launchers people already use put in the environment -- torchrun / ``accelerate
launch`` (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) and ``srun`` (SLURM_PROCID,
SLURM_NTASKS, SLURM_LOCALID) -- and opens the job's c10d store through
``torch.distributed.rendezvous("env://")`` so the store is the launcher's own (torchrun's agent
store when TORCHELASTIC_USE_AGENT_STORE is set, else one hosted by rank 0).
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from preflight.base.digits import ascii_digits, ascii_int
from preflight.errors import UserInputError

DEFAULT_PORT = 29500
MAX_WORLD_SIZE = 131072
"""Ranks one job may have: twice the largest GPU count of a public training run (~65k-100k
GPUs, 2025). Past it a WORLD_SIZE / SLURM_NTASKS is a usage error naming the variable (issue 21:
SLURM_NTASKS=200000 made rank 0 wait for, then list, 200,000 ranks)."""


class LaunchError(UserInputError):
    """The launcher environment is inconsistent (e.g. RANK >= WORLD_SIZE); exit code 2."""


@dataclass(frozen=True)
class RankInfo:
    """This process's place in the job, as the launcher described it."""

    rank: int
    world_size: int
    local_rank: int
    launcher: str                 # torchrun | slurm | none
    master_addr: str | None
    master_port: int | None
    run_id: str                   # distinguishes torchrun restarts sharing one agent store
    hostname: str


@dataclass(frozen=True)
class DeviceSlot:
    """The physical GPU this rank would use under the torchrun convention (``cuda:LOCAL_RANK``).

    ``entry`` is the CUDA_VISIBLE_DEVICES item the rank lands on (an index, a ``GPU-<uuid>`` or a
    ``MIG-<uuid>``), ``key`` what identifies the physical device on its host; two ranks of one
    host with the same key share a GPU, which NCCL refuses ("Duplicate GPU detected").
    """

    entry: str | None
    key: str | None
    problem: str | None = None    # e.g. LOCAL_RANK beyond the visible list
    index: int | None = None      # host GPU index, when known (shown instead of a UUID)

    def to_dict(self) -> dict[str, Any]:
        return {"entry": self.entry, "key": self.key, "problem": self.problem,
                "index": self.index}


def _int(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name)
    if raw is None or raw == "":
        return None
    text = raw.strip()
    if not ascii_digits(text) or len(text) > 12:
        raise LaunchError(f"environment variable {name}={raw[:40]!r} is not a whole number "
                          "(the launcher sets it; check the job script)")
    return int(text)


def first_slurm_host(nodelist: str) -> str | None:
    """The first host of a SLURM node list: ``gpu[03-05,09],cpu1`` -> ``gpu03``."""
    m = re.match(r"\s*([^,\[]+)(?:\[([^\]]+)\])?", nodelist)
    if not m:
        return None
    prefix, ranges = m.group(1), m.group(2)
    if not ranges:
        return prefix
    first = ranges.split(",")[0].split("-")[0]
    return prefix + first


def rank_info(env: Mapping[str, str] | None = None) -> RankInfo:
    """Rank, world size and rendezvous address from the launcher's environment variables.

    torchrun and ``accelerate launch`` set RANK/WORLD_SIZE/LOCAL_RANK/MASTER_*; ``srun`` sets
    SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID and no MASTER_ADDR, so the first host of the step's
    node list is used (MASTER_PORT defaults to 29500). With none of them this is one process.
    """
    env = os.environ if env is None else env
    host = socket.gethostname()
    if env.get("RANK") is not None and env.get("WORLD_SIZE") is not None:
        names = ("RANK", "WORLD_SIZE", "LOCAL_RANK")
        launcher = "torchrun"
    elif env.get("SLURM_PROCID") is not None and env.get("SLURM_NTASKS") is not None:
        names = ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID")
        launcher = "slurm"
    else:
        return RankInfo(0, 1, 0, "none", None, None, "single", host)
    rank, world, local = (_int(env, n) for n in names)
    if rank is None or world is None:
        raise LaunchError(f"{names[0]} and {names[1]} are set but empty")
    if not 1 <= world <= MAX_WORLD_SIZE:
        raise LaunchError(f"{names[1]}={world} is not a number of ranks fp8-doctor can compare "
                          f"(1 to {MAX_WORLD_SIZE:,})")
    if not 0 <= rank < world:
        raise LaunchError(f"{names[0]}={rank} is outside {names[1]}={world}")
    if local is not None and local >= MAX_WORLD_SIZE:
        raise LaunchError(f"{names[2]}={local} is not a local rank")
    addr = env.get("MASTER_ADDR")
    if not addr and launcher == "slurm":
        addr = first_slurm_host(env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST")
                                or "")
    port = _int(env, "MASTER_PORT") or (DEFAULT_PORT if launcher == "slurm" else None)
    if port is not None and not 0 < port < 65536:
        raise LaunchError(f"MASTER_PORT={port} is not a TCP port")
    if world > 1 and (not addr or port is None):
        raise LaunchError("MASTER_ADDR and MASTER_PORT must be set for a multi-process job "
                          "(torchrun and accelerate launch set them; under srun export them)")
    run_id = "-".join(filter(None, (env.get("TORCHELASTIC_RUN_ID") or env.get("SLURM_JOB_ID"),
                                    env.get("SLURM_STEP_ID"),
                                    env.get("TORCHELASTIC_RESTART_COUNT")))) or "run"
    return RankInfo(rank, world, local if local is not None else rank, launcher, addr, port,
                    run_id, host)


def device_slot(local_rank: int, env: Mapping[str, str] | None = None,
                uuid_of_index: Mapping[int, str] | None = None) -> DeviceSlot:
    """The physical GPU that ``cuda:LOCAL_RANK`` resolves to, from CUDA_VISIBLE_DEVICES.

    ``uuid_of_index`` (host index -> UUID, from NVML when available) lets an index-style entry
    and a UUID-style entry for the same GPU compare equal. No GPU is opened here.
    """
    env = os.environ if env is None else env
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    if cvd is None:
        entries = None
    else:
        # CUDA stops at the first invalid entry; an empty value hides every GPU.
        entries = [e.strip() for e in cvd.split(",") if e.strip()]
    if entries is None:
        entry = str(local_rank)
    elif local_rank < len(entries):
        entry = entries[local_rank]
    else:
        return DeviceSlot(None, None, f"LOCAL_RANK {local_rank} but CUDA_VISIBLE_DEVICES lists "
                                      f"{len(entries)} device(s)")
    if (index := ascii_int(entry, 9)) is not None:
        # ASCII digits only (str.isdigit takes '²', which int() refuses: an internal error
        # before any report; redteam4), and no int() of thousands of digits (leading zeros
        # count there: digits.ascii_int; redteam11)
        uuid = (uuid_of_index or {}).get(index)
        return DeviceSlot(entry, uuid or f"index:{index}", index=index)
    # CUDA accepts a unique UUID prefix ("GPU-8932f937"); resolve it so it matches the full one.
    full = [(i, u) for i, u in (uuid_of_index or {}).items() if u.startswith(entry)]
    if len(full) == 1:
        return DeviceSlot(entry, full[0][1], index=full[0][0])
    return DeviceSlot(entry, entry)


def nvml_uuids() -> dict[int, str]:
    """Host GPU index -> UUID through NVML; empty when NVML is not usable (no driver, no GPU).

    NVML is read in a child process, as by the gpu probe: a crash in the native library costs
    this rank its UUIDs, not its report (issue 13 item 3).
    """
    from preflight.probes.nvml import NVMLCrash, collect_nvml, start_nvml

    try:
        host = collect_nvml(start_nvml(), 10.0)
    except NVMLCrash:
        return {}
    if isinstance(host, str):
        return {}
    return {g.index: g.uuid for g in host.gpus if g.uuid}


def open_store(info: RankInfo, timeout_s: float) -> Any:
    """The job's c10d store (a TCPStore client, or the server on rank 0 outside torchrun).

    Under torchrun the agent's own store (``env://`` rendezvous). Otherwise (srun, a hand-made
    launch) rank 0 hosts a TCPStore that does *not* wait for every rank to connect: ``env://``
    builds it with ``wait_for_workers=True``, so one rank that never started ended rank 0 in
    "DistStoreError: Timed out ... waiting for clients" and no report (issue 13 item 4). The roll
    call (:mod:`preflight.cluster.gather`) names the missing ranks instead, as under torchrun.
    """
    import torch.distributed as dist

    os.environ.setdefault("MASTER_ADDR", info.master_addr or "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(info.master_port or DEFAULT_PORT))
    timeout = timedelta(seconds=timeout_s)
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True":
        store, _, _ = next(dist.rendezvous("env://", rank=info.rank, world_size=info.world_size,
                                           timeout=timeout))
        return store
    return dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                         info.world_size, is_master=info.rank == 0, timeout=timeout,
                         wait_for_workers=False)
