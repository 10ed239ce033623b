"""One rank's contribution: its facts from the normal pipeline, plus what only a rank knows.

Facts come from ``preflight.api.collect_facts`` exactly as ``fp8-doctor check`` gets them (the
smoke step, with ``--smoke``, runs pinned to this rank's own GPU). On top, a rank adds its place
in the job (rank, local rank, host), the GPU slot it would use, and the launcher-relevant
environment variables. A failure here becomes the payload's ``error``, so rank 0 can name it
instead of the job dying on one rank.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
import traceback
from collections.abc import Iterator, Mapping
from typing import Any

from preflight.api import CheckOptions, collect_facts
from preflight.cluster.launch import DeviceSlot, RankInfo, device_slot, nvml_uuids
from preflight.facts import Facts, encode_value
from preflight.redact import env_allowed, fingerprint, looks_secret

# Variables whose value must agree on every rank: a rank with another NVTE_* recipe or NCCL_*
# transport setting trains differently or hangs in the first collective. This says which
# variables are *compared*; what may be gathered at all is preflight.redact's policy
# (env_allowed), which e.g. leaves out NCCL_IB_HCA because it names the host's hardware.
ENV_PREFIXES = ("NVTE_", "NCCL_", "TORCH_NCCL_", "ACCELERATE_")
ENV_NAMES = ("CUDA_DEVICE_MAX_CONNECTIONS", "PYTORCH_CUDA_ALLOC_CONF", "NVIDIA_TF32_OVERRIDE")


def job_env(env: Mapping[str, str] | None = None, *, key: bytes | None = None
            ) -> dict[str, str]:
    """The compared environment variables that the report policy allows; secrets masked.

    Secret-looking values become ``<masked:...>``, a keyed fingerprint
    (:func:`preflight.redact.fingerprint`): rank 0 can tell two different secrets apart without
    seeing them, and the report cannot be used to confirm a guess. ``key`` must be the same on
    every rank (``gather.shared_mask_key``), or equal secrets would look different; without it
    the key is this process's own (fine for a job of one).
    """
    env = os.environ if env is None else env
    out: dict[str, str] = {}
    for name, value in env.items():
        if not (name.startswith(ENV_PREFIXES) or name in ENV_NAMES) or not env_allowed(name):
            continue
        # The name policy is the report's own (preflight.redact); values are checked here too,
        # because a masked value must be masked before it leaves the rank.
        if looks_secret(name, value):
            value = fingerprint(value, key)
        out[name] = value
    return out


def node_id(hostname: str) -> str:
    """Host name + kernel boot id, hashed: one value per machine boot and host name.

    The boot id tells apart cloned containers that share a host name on different machines;
    hashing keeps the id itself out of reports.
    """
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            boot = fh.read(64).strip()  # a UUID; never more
    except OSError:
        boot = ""
    return hashlib.sha256(f"{hostname}\0{boot}".encode()).hexdigest()[:16]


@contextlib.contextmanager
def pinned_gpu(slot: DeviceSlot) -> Iterator[None]:
    """Let child processes (the smoke step) see only this rank's GPU, then restore the env."""
    old = os.environ.get("CUDA_VISIBLE_DEVICES")
    if slot.entry is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = slot.entry
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = old


def _smoke(facts: Facts, options: CheckOptions, slot: DeviceSlot, extra: list[Any]
           ) -> tuple[Facts, dict[str, Any] | None]:
    """The smoke part of ``api.run_check``, on this rank's own GPU; with ``--strict``, an FP8
    job's smoke step that could not run is a finding in ``extra``, as for ``check``."""
    from preflight import smoke as smoke_mod

    want, why_not = smoke_mod.should_run(facts, options.smoke)
    if not want:
        skipped = {"smoke.ran": False, "smoke.skip_reason": why_not}
        if options.strict and facts.get("intent.fp8") is True:
            from preflight.strict import smoke_finding

            extra.append(smoke_finding(why_not))
        return facts.merged(skipped, source="smoke"), None
    with pinned_gpu(slot):
        outcome = smoke_mod.run(facts, options.smoke_options)
    return facts.merged(outcome.facts, source="smoke"), outcome.details


@contextlib.contextmanager
def _error_into(payload: dict[str, Any], stage: str) -> Iterator[None]:
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - a broken rank is reported by rank 0, not fatal
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else ""
        payload["error"] = f"{stage}: {type(exc).__name__}: {exc}{where}"


Local = tuple[Facts, tuple[Any, ...], list[Any], list[str]]


def collect_rank(info: RankInfo, options: CheckOptions, *, mask_key: bytes | None = None
                 ) -> tuple[dict[str, Any], Local | None]:
    """This rank's payload (JSON-ready, sent to rank 0) and its full local pipeline result.

    ``mask_key``: the job's shared key for fingerprints of secret env values (see job_env).

    The second value is ``(facts, probes, extra_findings, inputs)`` as ``collect_facts`` returns
    them (smoke facts merged in), or None when collection failed (then ``payload['error']``).
    """
    start = time.perf_counter()
    slot = device_slot(info.local_rank, uuid_of_index=nvml_uuids())
    payload: dict[str, Any] = {
        "rank": info.rank, "local_rank": info.local_rank, "host": info.hostname,
        "node_id": node_id(info.hostname),
        "launcher": info.launcher, "pid": os.getpid(), "device": slot.to_dict(),
        "env": job_env(key=mask_key), "facts": {}, "smoke": None, "error": None,
        "collectives": None,
    }
    local = None
    with _error_into(payload, "collecting facts"):
        facts, probes, extra, inputs = collect_facts(options)
        smoke_details = None
        if options.smoke is not False:
            facts, smoke_details = _smoke(facts, options, slot, extra)
        payload["facts"] = {n: encode_value(v) for n, v in facts.values.items()}
        payload["smoke"] = smoke_details
        payload["problems"] = [f.title for f in extra]
        local = (facts, probes, extra, inputs)
    payload["seconds"] = round(time.perf_counter() - start, 4)
    return payload, local
