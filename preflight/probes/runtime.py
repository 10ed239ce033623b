"""Runtime probe: Python, OS, launcher, /dev/shm, container hints and allow-listed env vars.

Environment variables are collected through an **allow-list** (a block-list misses
``AWS_SECRET_ACCESS_KEY``; review in vllm-project/vllm#9293), and any value whose name or content
looks secret is masked even under an allow-listed prefix (replicatedhq/troubleshoot#2100 leaked
proxy credentials into support bundles). Nothing here spawns a process.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.probes.base import ProbeResult
from preflight.redact import MASK, env_allowed, looks_secret

# The allow-list and the secret test are the report's own (preflight.redact), so what is
# collected and what may be shown can never disagree.
__all__ = ["MASK", "env_allowed", "looks_secret"]


def env_facts(env: Mapping[str, str]) -> dict[str, str]:
    """``env.<VAR>`` for allow-listed variables, secrets masked."""
    out: dict[str, str] = {}
    for name in sorted(env):
        if env_allowed(name):
            value = env[name]
            out[f"env.{name}"] = MASK if looks_secret(name, value) else value
    return out


def detect_launcher(env: Mapping[str, str]) -> str:
    """How this process was launched, from the variables each launcher sets."""
    if any(k.startswith("ACCELERATE_") for k in env) and (
            "ACCELERATE_MIXED_PRECISION" in env or "ACCELERATE_USE_DEEPSPEED" in env
            or "ACCELERATE_USE_FSDP" in env or "ACCELERATE_DYNAMO_BACKEND" in env):
        return "accelerate"
    if "TORCHELASTIC_RUN_ID" in env or "TORCHELASTIC_RESTART_COUNT" in env:
        return "torchrun"
    if "SLURM_PROCID" in env or ("SLURM_JOB_ID" in env and "SLURM_NTASKS" in env):
        return "slurm"
    if "OMPI_COMM_WORLD_SIZE" in env or "PMI_SIZE" in env or "PMIX_RANK" in env:
        return "mpi"
    return "none"


def _int_env(env: Mapping[str, str], *names: str) -> int | Unknown | None:
    for name in names:
        if name in env:
            raw = env[name].strip()
            return int(raw) if re.fullmatch(r"-?\d+", raw) else Unknown(
                f"{name}={raw!r} is not an integer")
    return None


def container_hint(env: Mapping[str, str], root: str = "/") -> str:
    """A best-effort container runtime hint from well-known marker files and variables."""
    def exists(rel: str) -> bool:
        return os.path.exists(os.path.join(root, rel))

    if "KUBERNETES_SERVICE_HOST" in env:
        return "kubernetes"
    if any(k.startswith("ENROOT_") for k in env) or exists("etc/enroot"):
        return "enroot"
    if exists("run/.containerenv"):
        return "podman"
    if exists(".dockerenv"):
        return "docker"
    try:
        with open(os.path.join(root, "proc/1/cgroup"), encoding="utf-8") as fh:
            cgroup = fh.read(4096)
    except OSError:
        cgroup = ""
    for word in ("kubepods", "docker", "containerd", "libpod"):
        if word in cgroup:
            return {"kubepods": "kubernetes", "libpod": "podman"}.get(word, "docker")
    return "none"


def shm_bytes(path: str = "/dev/shm") -> int | Unknown:
    """Size of the shared-memory filesystem (Docker's default is 64 MB; NCCL needs more)."""
    try:
        st = os.statvfs(path)
    except OSError as exc:
        return Unknown(f"{path}: {exc.strerror or exc}")
    return st.f_frsize * st.f_blocks


def _libc() -> str | Unknown:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") or Unknown("no glibc version reported")
    except (ValueError, OSError, AttributeError):
        return Unknown("not a glibc system")


def _mem_total() -> int | Unknown:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return Unknown("sysconf gives no physical memory size here")


_IMPLEMENTATIONS = {"cpython": "CPython", "pypy": "PyPy", "ironpython": "IronPython",
                    "jython": "Jython"}


def _platform_facts() -> dict[str, str]:
    """What ``platform`` says, from ``os.uname`` and ``sys``: importing ``platform`` compiles nine
    regular expressions, ~2 ms of every check (issue 14, item 4); tests compare the two."""
    uname = getattr(os, "uname", None)
    if uname is None:  # Windows
        import platform

        return {"host.python": platform.python_version(),
                "host.python_impl": platform.python_implementation(),
                "host.os": platform.system(), "host.os_release": platform.release(),
                "host.arch": platform.machine()}
    u = uname()
    name = sys.implementation.name
    return {"host.python": sys.version.split()[0],
            "host.python_impl": _IMPLEMENTATIONS.get(name, name),
            "host.os": u.sysname, "host.os_release": u.release, "host.arch": u.machine}


def host_facts(env: Mapping[str, str]) -> dict[str, Any]:
    """``host.*`` facts."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 0
    facts: dict[str, Any] = {
        **_platform_facts(),
        "host.libc": _libc(),
        "host.cpu_count": cpus,
        "host.mem_total_bytes": _mem_total(),
        "host.shm_bytes": shm_bytes() if sys.platform.startswith("linux") else Unknown(
            "/dev/shm is Linux-only"),
        "host.container": container_hint(env),
        "host.launcher": detect_launcher(env),
    }
    for fact, names in (("host.world_size", ("WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE",
                                             "PMI_SIZE")),
                        ("host.rank", ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")),
                        ("host.local_rank", ("LOCAL_RANK", "SLURM_LOCALID",
                                             "OMPI_COMM_WORLD_LOCAL_RANK"))):
        value = _int_env(env, *names)
        if value is not None:
            facts[fact] = value
    return facts


def probe_runtime(env: Mapping[str, str] | None = None) -> ProbeResult:
    """``host.*`` and ``env.*`` facts of this process."""
    env = dict(os.environ) if env is None else env
    facts = host_facts(env)
    facts.update(env_facts(env))
    return ProbeResult("runtime", facts, {n: "runtime" for n in facts})
