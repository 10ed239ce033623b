"""AMD GPUs through ROCm's KFD topology: a sysfs tree written as the amdgpu driver writes it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from probe_fakes import FakeNVML, NVMLError_LibraryNotFound, assert_registered

from preflight.engine.evaluate import evaluate
from preflight.engine.packs import load_check_rules
from preflight.facts import Facts, Unknown
from preflight.probes.base import ProbeStatus
from preflight.probes.gpu import probe_gpu
from preflight.probes.rocm import MAX_NODES, gfx_name, read_kfd

CPU_NODE = "cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\nvendor_id 0\n"


def gpu_node(version: int) -> str:
    return (f"cpu_cores_count 0\nsimd_count 1216\nmem_banks_count 1\ngfx_target_version {version}"
            "\nvendor_id 4098\ndevice_id 29857\ndrm_render_minor 128\n")


def kfd_tree(root: Path, *nodes: str) -> str:
    for i, text in enumerate(nodes):
        (root / str(i)).mkdir(parents=True)
        (root / str(i) / "properties").write_text(text)
    return str(root)


def amd_host(tmp_path: Path, *versions: int, env: dict[str, str] | None = None,
             no_smi: str = "") -> tuple[ProbeStatus, dict[str, object]]:
    root = kfd_tree(tmp_path / "nodes", CPU_NODE, CPU_NODE, *(gpu_node(v) for v in versions))
    nvml = FakeNVML(init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    result = probe_gpu(nvml=nvml, env={"PATH": no_smi, **(env or {})}, kfd=root)
    assert_registered(result.facts)
    return result.status, dict(result.facts)


@pytest.mark.parametrize(("version", "name"), [(90402, "gfx942"), (90500, "gfx950"),
                                               (90010, "gfx90a"), (110000, "gfx1100"),
                                               (100306, "gfx1036"), (120501, "gfx1251"),
                                               (0, None), (91600, None), (90016, None)])
def test_gfx_names(version: int, name: str | None) -> None:
    assert gfx_name(version) == name


@given(st.integers(min_value=1, max_value=99), st.integers(min_value=0, max_value=15),
       st.integers(min_value=0, max_value=15))
def test_gfx_name_reads_back(major: int, minor: int, stepping: int) -> None:
    gfx = gfx_name(major * 10000 + minor * 100 + stepping)
    assert gfx == f"gfx{major}{minor:x}{stepping:x}"


def test_an_mi300x_node(tmp_path: Path, no_smi_path: str) -> None:
    status, f = amd_host(tmp_path, *[90402] * 8, no_smi=no_smi_path)
    assert status is ProbeStatus.OK
    assert f["gpu.source"] == "kfd" and f["gpu.gfx"] == "gfx942"
    assert f["gpu.count"] == f["gpu.host_count"] == 8
    assert f["gpu.visible_indices"] == list(range(8))
    assert "MI300X" in str(f["gpu.name"]) and f["gpu.heterogeneous"] is False
    for fact in ("gpu.cc", "gpu.ccs", "gpu.arch"):
        assert isinstance(f[fact], Unknown) and "no CUDA compute capability" in f[fact].reason
    assert "NVML" in str(f["gpu.nvml_error"])


@pytest.mark.parametrize(("env", "count", "gfx"), [
    ({"ROCR_VISIBLE_DEVICES": "1"}, 1, "gfx950"),
    ({"HIP_VISIBLE_DEVICES": "1,0"}, 2, "gfx950"),
    ({"CUDA_VISIBLE_DEVICES": "0"}, 1, "gfx942"),
    # ROCr exposes host GPU 0 only; HIP's ordinal 1 then names no device (redteam16: read as
    # ROCr's alone before, 1 GPU; they compose, pytorch/pytorch#142292)
    ({"ROCR_VISIBLE_DEVICES": "0", "HIP_VISIBLE_DEVICES": "1"}, 0, "gfx942"),
    ({"ROCR_VISIBLE_DEVICES": "1,0", "HIP_VISIBLE_DEVICES": "1"}, 1, "gfx942"),
    ({"HIP_VISIBLE_DEVICES": ""}, 0, "gfx942"),
    ({"HIP_VISIBLE_DEVICES": "0,7,1"}, 1, "gfx942"),       # the list ends at the bad ordinal
])
def test_visible_devices(tmp_path: Path, env: dict[str, str], count: int, gfx: str,
                         no_smi_path: str) -> None:
    _, f = amd_host(tmp_path, 90402, 90500, env=env, no_smi=no_smi_path)
    assert f["gpu.count"] == count and f["gpu.host_count"] == 2 and f["gpu.gfx"] == gfx


def test_a_uuid_list_leaves_the_count_unknown(tmp_path: Path, no_smi_path: str) -> None:
    _, f = amd_host(tmp_path, 90402, env={"ROCR_VISIBLE_DEVICES": "GPU-4b2c0a"},
                    no_smi=no_smi_path)
    assert isinstance(f["gpu.count"], Unknown) and f["gpu.host_count"] == 1


def test_no_kfd_is_the_plain_unknown(tmp_path: Path, no_smi_path: str) -> None:
    nvml = FakeNVML(init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    for root in (tmp_path / "missing", kfd_tree(tmp_path / "cpu", CPU_NODE)):
        result = probe_gpu(nvml=nvml, env={"PATH": no_smi_path}, kfd=str(root))
        assert result.status is ProbeStatus.SKIPPED and result.facts["gpu.source"] == "none"
        assert "gpu.gfx" not in result.facts


def test_hostile_trees_are_bounded(tmp_path: Path) -> None:
    root = tmp_path / "nodes"
    kfd_tree(root, gpu_node(90402), "gfx_target_version " + "9" * 5000 + "\n",
             "\x00\xff garbage\ngfx_target_version -3\n", "x" * 200_000)
    (root / "9").mkdir()
    os.mkfifo(root / "9" / "properties")                # a FIFO is never opened
    (root / "10").mkdir()
    (root / "10" / "properties").symlink_to(root / "10" / "properties")    # a loop
    (root / "not-a-node").mkdir()
    assert read_kfd(str(root)) == ("gfx942",)
    many = tmp_path / "many"
    kfd_tree(many, *[gpu_node(90500)] * (MAX_NODES + 5))
    assert len(read_kfd(str(many))) == MAX_NODES


def test_the_mxfp8_rule_fires_on_a_probed_mi300x(tmp_path: Path, no_smi_path: str) -> None:
    """What the probe is for: FP8D-HW-0011 on the machine itself, without --assume."""
    rules = load_check_rules()
    for version, fires in ((90402, True), (90500, False)):
        _, f = amd_host(tmp_path / str(version), version, no_smi=no_smi_path)
        facts = Facts({**f, "intent.fp8": True, "intent.recipe": "mxfp8",
                       "pkg.transformer-engine.version": "2.4.0"})
        fired = {f.rule_id for f in evaluate(rules, facts).findings}
        assert ("FP8D-HW-0011" in fired) is fires
