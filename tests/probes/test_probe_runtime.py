"""Runtime probe: allow-listed env with secret masking, launcher, host facts, container hints."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from probe_fakes import assert_registered

from preflight.facts import Unknown
from preflight.probes.runtime import (
    MASK,
    container_hint,
    detect_launcher,
    env_facts,
    host_facts,
    looks_secret,
    probe_runtime,
    shm_bytes,
)


def test_allow_list_and_masking() -> None:
    env = {
        "NVTE_FUSED_ATTN": "1",
        "NCCL_DEBUG": "INFO",
        "CUDA_VISIBLE_DEVICES": "0,1",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
        # secret by name, under an allow-listed prefix
        "NVTE_API_TOKEN": "abc",
        "ACCELERATE_HUB_SECRET": "x",
        "TORCH_PRIVATE_KEY": "y",
        # secret by content, under an allow-listed prefix
        "ACCELERATE_MIRROR": "https://alice:s3cr3t@mirror.example.com/simple",
        "TORCH_EXTRA_ARGS": "hf_AbCdEfGhIjKlMnOpQrStUvWx",
        "NVTE_DEBUG_BLOB": "AKIAIOSFODNN7EXAMPLE",
        # not allow-listed at all
        "AWS_SECRET_ACCESS_KEY": "zzz",
        "HOME": "/home/alice",
        "HF_TOKEN": "hf_abc",
        "NCCL_IB_HCA": "mlx5",  # NCCL_* only selected names
    }
    f = env_facts(env)
    assert f["env.NVTE_FUSED_ATTN"] == "1" and f["env.NCCL_DEBUG"] == "INFO"
    assert f["env.CUDA_VISIBLE_DEVICES"] == "0,1"
    assert f["env.PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert f["env.TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "1"
    for name in ("NVTE_API_TOKEN", "ACCELERATE_HUB_SECRET", "TORCH_PRIVATE_KEY",
                 "ACCELERATE_MIRROR", "TORCH_EXTRA_ARGS", "NVTE_DEBUG_BLOB"):
        assert f[f"env.{name}"] == MASK, name
    for name in ("AWS_SECRET_ACCESS_KEY", "HOME", "HF_TOKEN", "NCCL_IB_HCA"):
        assert f"env.{name}" not in f
    assert "s3cr3t" not in repr(f) and "alice" not in repr(f)
    assert_registered(f)


@pytest.mark.parametrize("value", [
    "8.0;9.0", "expandable_segments:True", "/usr/local/cuda-12.4", "0,1,2,3", "INFO", "hybrid",
    "cf30153c4c131c8164ee7798e5022d810682e2cb/path/x",
    "GPU-8f3c2a10-1c2d-4e5f-8a9b-0c1d2e3f4a5b,MIG-11111111-2222-3333-4444-555555555555",
])
def test_ordinary_values_are_kept(value: str) -> None:
    assert not looks_secret("NVTE_SOMETHING", value)


@given(user=st.from_regex(r"[a-z]{1,8}", fullmatch=True),
       password=st.from_regex(r"[A-Za-z0-9]{1,12}", fullmatch=True),
       host=st.from_regex(r"[a-z]{1,10}\.com", fullmatch=True))
def test_url_credentials_always_masked(user: str, password: str, host: str) -> None:
    value = f"https://{user}:{password}@{host}/x"
    assert env_facts({"ACCELERATE_INDEX": value})["env.ACCELERATE_INDEX"] == MASK


@given(st.dictionaries(st.from_regex(r"[A-Z][A-Z0-9_]{0,20}", fullmatch=True),
                       st.text(max_size=30), max_size=10))
def test_only_allow_listed_names_come_out(env: dict[str, str]) -> None:
    from preflight.redact import env_allowed as allowed

    out = env_facts(env)
    assert all(allowed(name[len("env."):]) for name in out)
    assert all(f"env.{n}" in out for n in env if allowed(n))


@pytest.mark.parametrize("env, launcher", [
    ({}, "none"),
    ({"TORCHELASTIC_RUN_ID": "x", "RANK": "0", "WORLD_SIZE": "8"}, "torchrun"),
    ({"ACCELERATE_MIXED_PRECISION": "fp8", "TORCHELASTIC_RUN_ID": "x"}, "accelerate"),
    ({"SLURM_JOB_ID": "1", "SLURM_NTASKS": "16", "SLURM_PROCID": "3"}, "slurm"),
    ({"SLURM_JOB_ID": "1"}, "none"),  # inside an allocation, but not launched by srun
    ({"OMPI_COMM_WORLD_SIZE": "4"}, "mpi"),
])
def test_launcher(env: dict[str, str], launcher: str) -> None:
    assert detect_launcher(env) == launcher


def test_ranks_from_launcher_variables() -> None:
    f = host_facts({"SLURM_NTASKS": "16", "SLURM_PROCID": "3", "SLURM_LOCALID": "1"})
    assert (f["host.world_size"], f["host.rank"], f["host.local_rank"]) == (16, 3, 1)
    f = host_facts({"WORLD_SIZE": "8", "SLURM_NTASKS": "16", "RANK": "two"})
    assert f["host.world_size"] == 8  # torchrun's variable wins
    assert isinstance(f["host.rank"], Unknown) and "'two'" in f["host.rank"].reason
    assert "host.local_rank" not in host_facts({})


@pytest.mark.parametrize("marker, expected", [
    (".dockerenv", "docker"), ("run/.containerenv", "podman"), (None, "none"),
])
def test_container_hint(tmp_path: Path, marker: str | None, expected: str) -> None:
    if marker:
        (tmp_path / marker).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / marker).write_text("")
    assert container_hint({}, root=str(tmp_path)) == expected


def test_container_hint_from_cgroup_and_env(tmp_path: Path) -> None:
    (tmp_path / "proc/1").mkdir(parents=True)
    (tmp_path / "proc/1/cgroup").write_text("0::/kubepods/besteffort/pod1234\n")
    assert container_hint({}, root=str(tmp_path)) == "kubernetes"
    assert container_hint({"ENROOT_ROOTFS": "/x"}, root=str(tmp_path / "none")) == "enroot"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/dev/shm is Linux-only")
def test_shm_real_and_missing(tmp_path: Path) -> None:
    size = shm_bytes()
    if os.path.exists("/dev/shm"):
        assert isinstance(size, int) and size > 0
        st_ = os.statvfs("/dev/shm")
        assert size == st_.f_frsize * st_.f_blocks
    else:   # a sandbox without /dev/shm: the fact says so
        assert isinstance(size, Unknown) and "/dev/shm" in size.reason
    missing = shm_bytes(str(tmp_path / "no-shm"))
    assert isinstance(missing, Unknown) and "no-shm" in missing.reason


def test_real_probe() -> None:
    result = probe_runtime()
    f = result.facts
    assert_registered(f)
    assert f["host.python"] == platform.python_version()
    assert f["host.os"] == platform.system() and f["host.arch"] == platform.machine()
    assert isinstance(f["host.cpu_count"], int) and f["host.cpu_count"] >= 1
    assert set(result.provenance.values()) == {"runtime"}
    for name, value in os.environ.items():
        if f"env.{name}" in f and f[f"env.{name}"] != MASK:
            assert f[f"env.{name}"] == value


def test_platform_facts_say_what_the_platform_module_says() -> None:
    # runtime.py reads them from os.uname / sys to keep `import platform` off the check path.
    import platform

    from preflight.probes.runtime import _platform_facts

    assert _platform_facts() == {
        "host.python": platform.python_version(),
        "host.python_impl": platform.python_implementation(),
        "host.os": platform.system(), "host.os_release": platform.release(),
        "host.arch": platform.machine()}
