"""NVML in a child process: a crashing NVML library is a crashed probe, not a dead fp8-doctor.

The NVML here is the real pynvml over a stand-in ``libnvidia-ml.so.1`` (fake_nvml.c) compiled
into tmp_path and found through LD_LIBRARY_PATH; nothing is installed on the system. Its init
segfaults, aborts, calls ``_exit(42)`` or hangs as ``FAKE_NVML_MODE`` says (issue 13 item 3:
exit 139 / 134 / 42 and no report before the probe ran in a child).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight.facts import Unknown
from preflight.probes.base import ProbeStatus
from preflight.probes.gpu import probe_gpu, read_nvml

ROOT = Path(__file__).resolve().parents[2]
# The timeout for an NVML child that answers or crashes on its own: the probe's 10 s is for a
# Python child to start, load pynvml and the library, which a loaded machine may take seconds to
# do; a late answer must not become "did not answer". The hang test keeps its short one.
ANSWERS = 120.0


@pytest.fixture(scope="module")
def fake_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None or not sys.platform.startswith("linux"):
        pytest.skip("needs a C compiler on Linux to build a stand-in libnvidia-ml.so.1")
    pytest.importorskip("pynvml")
    lib = tmp_path_factory.mktemp("nvml")
    subprocess.run([gcc, "-shared", "-fPIC", "-o", str(lib / "libnvidia-ml.so.1"),
                    str(Path(__file__).with_name("fake_nvml.c"))], check=True, timeout=120)
    return lib


@pytest.fixture
def nvml_mode(fake_lib: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    def use(mode: str) -> None:
        monkeypatch.setenv("LD_LIBRARY_PATH", str(fake_lib))
        monkeypatch.setenv("FAKE_NVML_MODE", mode)
    return use


def test_a_working_nvml_gives_the_same_facts_as_in_process(nvml_mode, no_smi_path: str) -> None:
    nvml_mode("ok")
    result = probe_gpu(env={"PATH": no_smi_path}, nvml_timeout=ANSWERS)
    assert result.status is ProbeStatus.OK
    f = result.facts
    assert f["gpu.source"] == "nvml" and f["gpu.count"] == 2 and f["gpu.cc"] == "9.0"
    assert f["gpu.driver"] == "550.54.15" and f["gpu.cuda_driver"] == "12.4"
    assert f["gpu.mem_total_mib"] == [81559, 81559] and f["gpu.mig"] is False
    # The same library read in-process (as before issue 13), in a throwaway interpreter.
    code = ("import json, pynvml; from preflight.probes.gpu import read_nvml, _device_facts; "
            "from preflight.facts import Unknown; "
            "f = _device_facts(read_nvml(pynvml), None); "
            "print(json.dumps(f, default=lambda u: ['unknown', u.reason]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == json.loads(json.dumps(
        dict(f), default=lambda u: ["unknown", u.reason]))
    assert read_nvml  # the in-process reader stays for fakes of the pynvml interface


@pytest.mark.parametrize("mode, how", [("segv", "killed by SIGSEGV"),
                                       ("abort", "killed by SIGABRT"),
                                       ("exit", "exited with code 42")])
def test_a_crashing_nvml_is_a_crashed_probe(nvml_mode, no_smi_path: str, mode: str,
                                            how: str) -> None:
    nvml_mode(mode)
    result = probe_gpu(env={"PATH": no_smi_path}, nvml_timeout=ANSWERS)
    assert result.status is ProbeStatus.CRASHED and how in result.reason
    assert isinstance(result.facts["gpu.count"], Unknown)
    assert how in result.facts["gpu.count"].reason


def test_a_hanging_nvml_is_given_up_after_its_timeout(nvml_mode, no_smi_path: str) -> None:
    nvml_mode("hang")
    start = time.monotonic()
    result = probe_gpu(env={"PATH": no_smi_path}, nvml_timeout=1.0)
    assert time.monotonic() - start < 30    # the timeout, far under the hang's 600 s
    assert "NVML did not answer within 1 s" in result.facts["gpu.nvml_error"]
    assert result.status is ProbeStatus.SKIPPED


@pytest.mark.parametrize("mode", ["segv", "abort", "exit"])
def test_check_still_reports_when_nvml_crashes(fake_lib: Path, tmp_path: Path,
                                               mode: str) -> None:
    env = {**os.environ, "LD_LIBRARY_PATH": str(fake_lib), "FAKE_NVML_MODE": mode,
           "PYTHONPATH": str(ROOT)}
    # The CLI gives the NVML child its 10 s (no option sets it): a machine too loaded to start
    # Python and load the library in that time turns the crash into a timeout. Twice, then a
    # skip that says so.
    for _ in range(2):
        out = subprocess.run([sys.executable, "-m", "preflight", "check", "--no-smoke",
                              "--format", "json"], capture_output=True, text=True, timeout=120,
                             env=env, cwd=tmp_path)
        assert out.returncode in (0, 1), (out.returncode, out.stderr[-2000:])
        doc = json.loads(out.stdout)
        if "NVML did not answer within" not in str(doc["facts"].get("gpu.nvml_error")):
            break
    else:
        pytest.skip("the NVML child did not reach its crash within the probe's 10 s, twice")
    crash = [f for f in doc["findings"] if f["id"] == "FP8D-PROBE-CRASH"]
    assert crash and "'gpu'" in crash[0]["title"]


def test_cluster_uuids_come_from_the_child_and_survive_a_crash(
        nvml_mode, monkeypatch: pytest.MonkeyPatch) -> None:
    from preflight.cluster.launch import nvml_uuids
    from preflight.probes import nvml

    # the real child, given ANSWERS instead of its 10 s (nvml_uuids has no timeout argument)
    monkeypatch.setattr(nvml, "start_nvml", functools.partial(nvml.start_nvml, ANSWERS))
    nvml_mode("ok")
    assert nvml_uuids() == {0: "GPU-00000000-2222-3333-4444-555555555555",
                            1: "GPU-11111111-2222-3333-4444-555555555555"}
    nvml_mode("segv")
    assert nvml_uuids() == {}


_JSONABLE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@given(_JSONABLE)
def test_the_childs_own_json_encoder_round_trips(value: object) -> None:
    from preflight.probes.nvml_child import dumps

    text = dumps(value)
    assert text.isascii() and json.loads(text) == value


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's loader (Linux)")
def test_library_absent_is_said_only_when_certain(tmp_path: Path) -> None:
    from preflight.probes.nvml import library_absent

    cache = tmp_path / "ld.so.cache"
    cache.write_bytes(b"glibc-ld.so.cache1.1" + b"\0libc.so.6\0/usr/lib/libc.so.6\0")
    empty = tmp_path / "empty"
    empty.mkdir()
    system_has_it = any(Path(d, "libnvidia-ml.so.1").exists()
                        for d in ("/lib", "/usr/lib", "/lib64", "/usr/lib64"))
    if not system_has_it:
        why = library_absent({"LD_LIBRARY_PATH": str(empty)}, str(cache))
        assert why and why.startswith("NVML: ") and str(cache) in why
    # In the cache, on LD_LIBRARY_PATH, or no usable cache at all: the child must look.
    listed = tmp_path / "listed.cache"
    listed.write_bytes(b"glibc-ld.so.cache1.1\0libnvidia-ml.so.1\0/usr/lib/x/libnvidia-ml.so.1\0")
    assert library_absent({}, str(listed)) is None
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libnvidia-ml.so.1").write_bytes(b"")
    assert library_absent({"LD_LIBRARY_PATH": f"{empty}:{lib}"}, str(cache)) is None
    assert library_absent({}, str(tmp_path / "no-cache")) is None
    (tmp_path / "garbage").write_bytes(b"not a cache")
    assert library_absent({}, str(tmp_path / "garbage")) is None
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo")
        assert library_absent({}, str(tmp_path / "fifo")) is None  # refused, not waited on


def test_no_child_is_started_where_the_library_certainly_is_not(no_smi_path: str) -> None:
    from preflight.probes import nvml

    if nvml.library_absent() is None:
        pytest.skip("this machine may have libnvidia-ml.so.1")
    started = nvml.start_nvml()
    assert isinstance(started, str) and started.startswith("NVML: ")
    result = probe_gpu(env={"PATH": no_smi_path}, nvml_started=started)
    assert result.facts["gpu.nvml_error"] == started
    assert isinstance(result.facts["gpu.count"], Unknown)
