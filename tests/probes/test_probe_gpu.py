"""GPU probe: NVML host view, CUDA_VISIBLE_DEVICES process view, nvidia-smi fallback, no GPU."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from probe_fakes import (
    A100,
    H100,
    FakeGPU,
    FakeNVML,
    NVMLError_LibraryNotFound,
    assert_registered,
    uuid,
)

from preflight.facts import Unknown
from preflight.probes.base import ProbeStatus
from preflight.probes.gpu import HostGPU, probe_gpu, resolve_visible

GIB = 1024**3
# The timeout for a fake nvidia-smi that answers: the probe's own 5 s raced the start of its shell
# (and cat / yes) on a loaded machine, and a late answer became "did not answer" (the flake of
# tests/test_startup.py's nvidia-smi test). Only the tests of the timeout itself use a short one.
ANSWERS = 120.0


def two_h100(**kw: Any) -> FakeNVML:
    return FakeNVML([FakeGPU(H100, (9, 0), uuid(0)), FakeGPU(H100, (9, 0), uuid(1))], **kw)


def run(nvml: FakeNVML, cvd: str | None = None, path: str = "") -> dict[str, Any]:
    env = {"PATH": path}
    if cvd is not None:
        env["CUDA_VISIBLE_DEVICES"] = cvd
    result = probe_gpu(nvml=nvml, env=env)
    assert_registered(result.facts)
    return dict(result.facts)


@pytest.mark.parametrize("as_bytes", [False, True], ids=["str-api", "bytes-api"])
def test_nvml_host_and_process_view(as_bytes: bool) -> None:
    nvml = two_h100(as_bytes=as_bytes, cuda=12040, driver="550.54.15")
    result = probe_gpu(nvml=nvml, env={})
    f = result.facts
    assert result.status is ProbeStatus.OK
    assert f["gpu.source"] == "nvml" and set(result.provenance.values()) == {"nvml"}
    assert f["gpu.count"] == 2 and f["gpu.host_count"] == 2
    assert f["gpu.names"] == [H100, H100] and f["gpu.name"] == H100
    assert f["gpu.ccs"] == ["9.0", "9.0"]
    assert (f["gpu.cc"], f["gpu.min_cc"], f["gpu.max_cc"]) == ("9.0", "9.0", "9.0")
    assert f["gpu.arch"] == "hopper" and f["gpu.heterogeneous"] is False
    assert f["gpu.driver"] == "550.54.15" and f["gpu.cuda_driver"] == "12.4"
    assert f["gpu.mem_total_mib"] == [81920, 81920] and f["gpu.min_mem_mib"] == 81920
    assert f["gpu.mig"] is False
    assert nvml.calls[0] == "init" and nvml.calls[-1] == "shutdown"


def test_cuda_driver_without_v2_call() -> None:
    f = run(two_h100(has_v2=False, cuda=13010))
    assert f["gpu.cuda_driver"] == "13.1"


def test_heterogeneous_host_orders_cc_as_numbers() -> None:
    nvml = FakeNVML([FakeGPU(A100, (8, 0), uuid(0), 40 * GIB),
                     FakeGPU("NVIDIA B200", (10, 0), uuid(1), 180 * GIB)])
    f = run(nvml)
    assert f["gpu.min_cc"] == "8.0" and f["gpu.max_cc"] == "10.0"  # "10.0" > "8.0" numerically
    assert f["gpu.cc"] == "8.0" and f["gpu.arch"] == "ampere"
    assert f["gpu.heterogeneous"] is True
    assert f["gpu.min_mem_mib"] == 40 * 1024


@pytest.mark.parametrize("cvd, indices, error", [
    ("1", [1], False),
    ("1,0", [1, 0], False),
    ("", [], False),
    ("0,7,1", [0], True),        # CUDA stops at the first entry it cannot resolve
    ("0,0", [0], True),          # a repeated device is treated the same way
    ("GPU-00000001", [1], False),  # a unique UUID prefix is enough
    ("GPU-0000", [], True),      # an ambiguous prefix resolves nothing
    ("nonsense,0", [], True),
])
def test_cuda_visible_devices(cvd: str, indices: list[int], error: bool) -> None:
    f = run(two_h100(), cvd)
    assert f["gpu.visible_indices"] == indices
    assert f["gpu.count"] == len(indices) and f["gpu.host_count"] == 2
    assert ("gpu.visible_devices_error" in f) is error
    if not indices:
        assert "gpu.cc" not in f and "gpu.name" not in f and f["gpu.names"] == []


def test_full_uuid_and_mig_uuid() -> None:
    mig = FakeGPU(A100, (8, 0), uuid(1), mig=1,
                  mig_uuids=("MIG-11111111-2222-3333-4444-555555555555",))
    nvml = FakeNVML([FakeGPU(H100, (9, 0), uuid(0)), mig])
    assert run(nvml, uuid(0))["gpu.names"] == [H100]
    f = run(nvml, "MIG-11111111-2222-3333-4444-555555555555")
    assert f["gpu.names"] == [A100] and f["gpu.mig"] is True and f["gpu.cc"] == "8.0"
    f = run(nvml, f"MIG-{uuid(1)}/1/0")  # pre-R470 MIG-GPU-<uuid>/gi/ci form
    assert f["gpu.visible_indices"] == [1] and f["gpu.mig"] is True
    assert run(nvml, "0")["gpu.mig"] is False
    assert run(nvml)["gpu.mig"] is True  # the host has a MIG-enabled GPU, and it is visible


def test_per_device_failures_are_unknown_not_crash() -> None:
    nvml = FakeNVML([FakeGPU("NVIDIA GeForce RTX 4090", None, uuid(0), mig=None)])
    f = run(nvml)
    assert f["gpu.mig"] is False  # NOT_SUPPORTED: the GPU has no MIG
    assert isinstance(f["gpu.cc"], Unknown) and isinstance(f["gpu.min_cc"], Unknown)
    assert "compute capability" in f["gpu.cc"].reason
    assert f["gpu.name"] == "NVIDIA GeForce RTX 4090"


def test_no_nvml_and_no_smi_is_a_clear_unknown(no_smi_path: str) -> None:
    nvml = FakeNVML(init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    result = probe_gpu(nvml=nvml, env={"PATH": no_smi_path})
    f = result.facts
    assert result.status is ProbeStatus.SKIPPED
    assert f["gpu.source"] == "none"
    assert isinstance(f["gpu.count"], Unknown) and isinstance(f["gpu.cc"], Unknown)
    reason = f["gpu.count"].reason
    assert "libnvidia-ml" in reason and "nvidia-smi not found" in reason
    assert "NVML" in f["gpu.nvml_error"]
    assert_registered(f)


def test_empty_cuda_visible_devices_means_zero_even_without_nvml(no_smi_path: str) -> None:
    nvml = FakeNVML(init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    f = probe_gpu(nvml=nvml, env={"PATH": no_smi_path, "CUDA_VISIBLE_DEVICES": ""}).facts
    assert f["gpu.count"] == 0 and isinstance(f["gpu.host_count"], Unknown)


def test_a_broken_nvml_binding_is_a_fact(no_smi_path: str) -> None:
    result = probe_gpu(nvml=object(), env={"PATH": no_smi_path})  # has none of the calls
    assert result.facts["gpu.source"] == "none"
    assert "AttributeError" in result.facts["gpu.nvml_error"]


def test_nvml_count_error_falls_back(fake_smi: Any) -> None:
    class Broken(FakeNVML):
        def nvmlDeviceGetCount(self) -> int:  # noqa: N802
            raise RuntimeError("GPU is lost")

    fake_smi("ok")
    result = probe_gpu(nvml=Broken([]), env=dict(os.environ), smi_timeout=ANSWERS)
    assert result.facts["gpu.source"] == "nvidia-smi"
    assert "GPU is lost" in result.facts["gpu.nvml_error"]


def test_smi_fallback_parses_csv_and_header(fake_smi: Any) -> None:
    fake_smi("ok")
    nvml = FakeNVML(init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    result = probe_gpu(nvml=nvml, env={**os.environ, "CUDA_VISIBLE_DEVICES": "1"},
                       smi_timeout=ANSWERS)
    f = result.facts
    assert_registered(f)
    assert f["gpu.source"] == "nvidia-smi" and set(result.provenance.values()) == {"nvidia-smi"}
    assert f["gpu.host_count"] == 2 and f["gpu.count"] == 1 and f["gpu.visible_indices"] == [1]
    assert f["gpu.names"] == ["NVIDIA H100 80GB HBM3"] and f["gpu.cc"] == "9.0"
    assert f["gpu.driver"] == "550.54.15" and f["gpu.cuda_driver"] == "12.4"
    assert f["gpu.mem_total_mib"] == [81559] and f["gpu.mig"] is False
    # UUIDs from nvidia-smi resolve too
    f = probe_gpu(nvml=nvml, env={**os.environ, "CUDA_VISIBLE_DEVICES": "GPU-bbbb"},
                  smi_timeout=ANSWERS).facts
    assert f["gpu.visible_indices"] == [1]


def test_smi_without_compute_cap_field(fake_smi: Any) -> None:
    fake_smi("old")
    nvml = FakeNVML(init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    f = probe_gpu(nvml=nvml, env=dict(os.environ), smi_timeout=ANSWERS).facts
    assert f["gpu.names"] == ["Tesla V100-SXM2-32GB"] and f["gpu.cc"] == "7.0"  # from the table
    assert f["gpu.driver"] == "470.82.01" and f["gpu.cuda_driver"] == "11.4"
    assert f["gpu.mig"] is False


def test_smi_failing_is_a_fact(fake_smi: Any) -> None:
    fake_smi("fail")
    nvml = FakeNVML(init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    f = probe_gpu(nvml=nvml, env=dict(os.environ), smi_timeout=ANSWERS).facts
    assert isinstance(f["gpu.count"], Unknown)
    assert "exit code 9" in f["gpu.count"].reason
    assert "couldn't communicate with the NVIDIA driver" in f["gpu.count"].reason


def test_smi_garbage_is_a_fact(fake_smi: Any) -> None:
    fake_smi("garbage")
    nvml = FakeNVML(init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    f = probe_gpu(nvml=nvml, env=dict(os.environ), smi_timeout=ANSWERS).facts
    assert isinstance(f["gpu.count"], Unknown) and "expected CSV" in f["gpu.count"].reason


def test_a_flood_of_smi_output_is_refused_quickly(fake_smi: Any) -> None:
    fake_smi("flood")
    nvml = FakeNVML(init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    start = time.monotonic()
    f = probe_gpu(nvml=nvml, env=dict(os.environ), smi_timeout=ANSWERS).facts
    assert time.monotonic() - start < 30   # generous: a loaded machine takes seconds
    assert isinstance(f["gpu.count"], Unknown)
    assert "far more than a GPU list" in f["gpu.count"].reason


def test_an_endless_smi_is_killed_at_the_byte_cap_not_the_timeout(fake_smi: Any) -> None:
    # issue 13 item 2: the flood was buffered until the timeout (25 s, 6.7 GB). Now reading stops
    # at SMI_MAX_BYTES, so neither the timeout nor memory is reached. Run in a child to measure
    # its peak memory alone: VmHWM, not ru_maxrss, which Linux carries over from the forked
    # parent (a pytest that imported torch) across exec.
    if not Path("/proc/self/status").exists():
        pytest.skip("peak memory is read from /proc/self/status (Linux)")
    folder = fake_smi("flood-forever")
    code = ("import json, re, time; from preflight.probes.gpu import read_smi; "
            "t = time.monotonic(); r = read_smi(%r, 60.0); "
            "hwm = int(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read())[1]); "
            "print(json.dumps([r, time.monotonic() - t, hwm]))" % str(folder / "nvidia-smi"))
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(root)})
    assert out.returncode == 0, out.stderr
    reason, seconds, peak_kib = __import__("json").loads(out.stdout)
    assert "far more than a GPU list" in reason and "killed: output over 262,144 bytes" in reason
    # far under the 60 s timeout, with room for a loaded machine
    assert seconds < 30, f"{seconds:.1f} s: the flood was read until the timeout"
    assert peak_kib < 150 * 1024, f"peak {peak_kib // 1024} MiB: the flood was buffered"


def test_duplicate_smi_lines_count_once_and_blank_cc_comes_from_the_table(fake_smi: Any) -> None:
    fake_smi("dupes")
    nvml = FakeNVML(init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    f = probe_gpu(nvml=nvml, env=dict(os.environ), smi_timeout=ANSWERS).facts
    assert f["gpu.host_count"] == 1 and f["gpu.count"] == 1
    assert f["gpu.cc"] == "8.9"          # NVIDIA L4, from the GPU table


def test_hanging_smi_returns_within_timeout(fake_smi: Any) -> None:
    fake_smi("hang")
    nvml = FakeNVML(init_error=NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    start = time.monotonic()
    f = probe_gpu(nvml=nvml, env=dict(os.environ), smi_timeout=0.5).facts
    elapsed = time.monotonic() - start
    # far under the fake's 30 s sleep, with room for a loaded machine
    assert elapsed < 15, f"probe took {elapsed:.1f} s despite a 0.5 s timeout"
    assert isinstance(f["gpu.count"], Unknown)
    assert "did not answer within 0.5 s" in f["gpu.count"].reason


def test_hanging_nvml_returns_within_timeout(no_smi_path: str) -> None:
    """A wedged driver can block nvmlInit; the probe gives up after its timeout, never hangs."""
    release = threading.Event()

    class Hangs(FakeNVML):
        def nvmlInit(self) -> None:  # noqa: N802
            release.wait(60)

    start = time.monotonic()
    try:
        result = probe_gpu(nvml=Hangs([]), env={"PATH": no_smi_path}, nvml_timeout=0.5)
    finally:
        release.set()
    elapsed = time.monotonic() - start
    # far under the 60 s the fake blocks for, with room for a loaded machine
    assert elapsed < 30, f"probe took {elapsed:.1f} s despite a 0.5 s NVML timeout"
    assert "NVML did not answer within 0.5 s" in result.facts["gpu.nvml_error"]
    assert isinstance(result.facts["gpu.count"], Unknown)


def test_a_pynvml_that_raises_on_import_is_a_fact(tmp_path: Path) -> None:
    """The real loader path: libnvidia-ml.so.1 loads (a stub built here) but pynvml is broken."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None or not sys.platform.startswith("linux"):
        pytest.skip("needs a C compiler on Linux to build a stub libnvidia-ml.so.1")
    lib = tmp_path / "lib"
    lib.mkdir()
    subprocess.run([gcc, "-shared", "-fPIC", "-x", "c", "-", "-o", str(lib / "libnvidia-ml.so.1")],
                   input="int fp8_doctor_stub;\n", text=True, check=True, timeout=60)
    py = tmp_path / "py"
    py.mkdir()
    (py / "pynvml.py").write_text("raise RuntimeError('broken pynvml build')\n")
    root = Path(__file__).resolve().parents[2]
    code = ("import json; from preflight.probes.gpu import probe_gpu; "
            "r = probe_gpu(env={'PATH': ''}, nvml_timeout=120); print(json.dumps(r.facts['gpu.nvml_error']))")
    env = {**os.environ, "LD_LIBRARY_PATH": str(lib),
           "PYTHONPATH": os.pathsep.join([str(py), str(root)])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "pynvml could not be loaded: RuntimeError: broken pynvml build" in out.stdout


def test_real_probe_gives_facts_or_a_clear_reason() -> None:
    """The real NVML (none on CI machines): either real GPU facts or an explicit reason."""
    result = probe_gpu()
    f = result.facts
    assert_registered(f)
    try:
        import pynvml

        pynvml.nvmlInit()
        pynvml.nvmlShutdown()
        have_nvml = True
    except Exception:  # noqa: BLE001
        have_nvml = False
    if have_nvml:
        assert f["gpu.source"] == "nvml" and isinstance(f["gpu.host_count"], int)
    else:
        assert f["gpu.source"] in ("none", "nvidia-smi")
        assert f["gpu.nvml_error"].startswith("NVML: ")
        if f["gpu.source"] == "none":
            assert isinstance(f["gpu.host_count"], Unknown)
            assert "nvidia-smi" in f["gpu.host_count"].reason


HOST = [HostGPU(i, f"GPU{i}", "9.0", uuid(i)) for i in range(4)]


@given(st.lists(st.integers(min_value=-2, max_value=6), max_size=8))
def test_visible_is_the_valid_prefix(indices: list[int]) -> None:
    spec = ",".join(map(str, indices))
    visible, note = resolve_visible(spec, HOST)
    expected: list[int] = []
    for i in indices:
        if not 0 <= i < len(HOST) or i in expected:
            break
        expected.append(i)
    assert [v.gpu.index for v in visible] == expected
    assert bool(note) == (len(expected) < len(indices))


@given(st.text(max_size=40))
def test_visible_never_raises(spec: str) -> None:
    visible, _ = resolve_visible(spec, HOST)
    assert len(visible) <= len(HOST)
