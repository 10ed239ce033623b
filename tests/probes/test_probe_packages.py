"""Packages probe: real importlib.metadata over fake site folders, torch/version.py as text."""

from __future__ import annotations

import importlib.metadata as md
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from probe_fakes import assert_registered, make_dist

from preflight.facts import Unknown
from preflight.probes.packages import (
    _listed,
    discover,
    probe_packages,
    read_torch_version_file,
    scan,
    torch_build_facts,
    version_facts,
)
from preflight.redact import redact_text

CUDA_VERSION_PY = """from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']
__version__ = '2.5.1+cu124'
debug = False
cuda: Optional[str] = '12.4'
git_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'
hip: Optional[str] = None
xpu: Optional[str] = None
"""
CPU_VERSION_PY = """from typing import Optional
__version__ = '2.13.0+cpu'
debug = False
cuda: Optional[str] = None
git_version = 'cf30153c4c131c8164ee7798e5022d810682e2cb'
hip: Optional[str] = None
"""
NGC_VERSION_PY = """__version__ = '2.4.0a0+3bcc3cd.nv24.07'
debug = False
cuda = '12.5'
git_version = '3bcc3cdbbf0f0ff8c1f0b77bc5e1b0f9e7b3a3a1'
hip = None
"""
ROCM_VERSION_PY = """__version__ = '2.5.1+rocm6.2'
cuda = None
hip = '6.2.41133-dd7f95766'
"""


def facts_for(tmp_path: Path, *sites: Path, version_py: str | None = None) -> dict:
    dists = list(md.distributions(path=[str(s) for s in sites]))
    result = probe_packages(dists, torch_version_py=version_py or str(tmp_path / "absent.py"))
    assert_registered(result.facts)
    return dict(result.facts)


@pytest.mark.parametrize("version, public, local", [
    ("2.5.1+cu124", "2.5.1", "cu124"),
    ("2.4.0a0+3bcc3cd.nv24.07", "2.4.0a0", "3bcc3cd.nv24.07"),
    ("2.13.0", "2.13.0", None),
    ("1.0.0-rc1", "1.0.0rc1", None),
    ("not a version+x", "not a version", "x"),
])
def test_version_facts_keep_the_exact_string(version: str, public: str, local: str | None) -> None:
    f = version_facts("torch", version)
    assert f["pkg.torch.version"] == version
    assert f["pkg.torch.public"] == public
    assert f.get("pkg.torch.local") == local


def test_fake_site_packages(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "torch", "2.4.0a0+3bcc3cd.nv24.07")
    make_dist(site, "transformer_engine", "1.9.0")
    make_dist(site, "transformer_engine_cu12", "1.9.0")
    make_dist(site, "transformer_engine_torch", "1.10.0")
    make_dist(site, "DeepSpeed", "0.15.4")
    make_dist(site, "nvidia-cudnn-cu12", "9.1.0.70")
    make_dist(site, "nvidia-cublas-cu12", "12.4.5.8")
    make_dist(site, "requests", "2.32.3")  # not FP8-relevant: not reported
    version_py = tmp_path / "torch_version.py"
    version_py.write_text(NGC_VERSION_PY)
    f = facts_for(tmp_path, site, version_py=str(version_py))
    assert f["pkg.torch.version"] == "2.4.0a0+3bcc3cd.nv24.07"
    assert f["pkg.torch.local"] == "3bcc3cd.nv24.07" and f["pkg.torch.public"] == "2.4.0a0"
    assert f["pkg.deepspeed.version"] == "0.15.4"  # PEP 503 name
    assert f["pkg.deepspeed.location"] == str(site)
    assert not any(k.startswith("pkg.requests.") for k in f)
    assert f["pkg.te.versions"] == {"transformer-engine": "1.9.0",
                                    "transformer-engine-cu12": "1.9.0",
                                    "transformer-engine-torch": "1.10.0"}
    assert f["pkg.te.versions_agree"] is False
    assert f["pkg.te.core"] == "transformer-engine-cu12" and f["pkg.te.cuda_major"] == 12
    assert f["cuda.torch_build"] == "12.5" and f["cuda.torch_variant"] == "cuda"
    assert f["cuda.cudnn"] == "9.1.0.70" and f["cuda.cublas"] == "12.4.5.8"
    assert f["pkg.broken"] == []


def test_fine_tuning_front_ends_are_reported(tmp_path: Path) -> None:
    # their rules read the version (FP8D-LF-0011..0013, FP8D-AXO-0002..0005, FP8D-SWIFT-0003)
    site = tmp_path / "site"
    make_dist(site, "llamafactory", "0.9.5")
    make_dist(site, "axolotl", "0.18.0")
    make_dist(site, "ms_swift", "4.5.2")
    f = facts_for(tmp_path, site)
    assert (f["pkg.llamafactory.version"], f["pkg.axolotl.version"]) == ("0.9.5", "0.18.0")
    assert f["pkg.ms-swift.version"] == "4.5.2"   # PEP 503 name of ms_swift


def test_te_agreement_and_source_build(tmp_path: Path) -> None:
    a = tmp_path / "a"
    for name in ("transformer_engine", "transformer_engine_cu13", "transformer_engine_torch"):
        make_dist(a, name, "2.9.0")
    f = facts_for(tmp_path, a)
    assert f["pkg.te.versions_agree"] is True and f["pkg.te.core"] == "transformer-engine-cu13"
    b = tmp_path / "b"  # NGC-style source build: one distribution, no core wheel
    make_dist(b, "transformer_engine", "1.9.0+e79d915")
    f = facts_for(tmp_path, b)
    assert f["pkg.te.core"] == "none" and f["pkg.te.versions_agree"] is True
    assert "pkg.te.cuda_major" not in f
    c = tmp_path / "c"
    make_dist(c, "torch", "2.5.1")
    assert not any(k.startswith("pkg.te.") for k in facts_for(tmp_path, c))


def test_duplicates_on_sys_path(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    make_dist(first, "deepspeed", "0.16.0")
    make_dist(second, "deepspeed", "0.14.2")
    f = facts_for(tmp_path, first, second)
    assert f["pkg.deepspeed.version"] == "0.16.0"  # the first one is what `import` finds
    assert f["pkg.deepspeed.duplicate"] == ["0.16.0", "0.14.2"]
    assert "pkg.deepspeed.duplicate" not in facts_for(tmp_path, first, first)  # same folder twice


def test_broken_metadata_is_a_fact(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "torchao", "0.10.0")
    make_dist(site, "ghost", "1.0", metadata="")  # no METADATA file at all
    make_dist(site, "noversion", None)
    make_dist(site, "garbled", "1.0", metadata="\x00\x01 this is not a header\n")
    f = facts_for(tmp_path, site)
    broken = " | ".join(f["pkg.broken"])
    assert len(f["pkg.broken"]) == 3
    assert "ghost-1.0.dist-info: no METADATA file" in broken
    assert "noversion-0.dist-info: METADATA has no Version" in broken
    assert "garbled-1.0.dist-info: METADATA has no Name or Version" in broken
    assert f["pkg.torchao.version"] == "0.10.0"  # the good ones still reported


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_metadata_that_is_dev_zero_or_a_fifo_is_refused_not_read(tmp_path: Path) -> None:
    # issue 13 item 2: a METADATA symlinked to /dev/zero was read whole (OOM at 24 GB); one that
    # was a FIFO hung the run forever. Both are now named in pkg.broken, at once.
    site = tmp_path / "site"
    make_dist(site, "torchao", "0.10.0")
    zero = make_dist(site, "zero", "1.0", metadata="") / "METADATA"
    zero.symlink_to("/dev/zero")
    os.mkfifo(make_dist(site, "fifo", "1.0", metadata="") / "METADATA")
    os.mkfifo(site / "pipe-2.0.dist-info")  # the distribution "folder" itself
    start = time.monotonic()
    f = facts_for(tmp_path, site)
    assert time.monotonic() - start < 30   # a FIFO read waits forever; load takes seconds
    broken = " | ".join(f["pkg.broken"])
    assert "zero-1.0.dist-info: metadata is a character device, not a regular file" in broken
    assert "fifo-1.0.dist-info: metadata is a FIFO (named pipe), not a regular file" in broken
    assert "pipe-2.0.dist-info: metadata is a FIFO" in broken
    assert f["pkg.torchao.version"] == "0.10.0"


def test_only_the_metadata_header_is_read(tmp_path: Path) -> None:
    # A body of 8 MiB after the header is never read: the reader stops at the blank line.
    site = tmp_path / "site"
    body = "Name: not-this\nVersion: 9.9\n" + "x" * (8 * 1024 * 1024)
    folder = make_dist(site, "peft", "0.13.0",
                       metadata="Metadata-Version: 2.1\nName: peft\nVersion: 0.13.0\n\n" + body)
    from preflight.base import bounded

    head = bounded.read_bytes(folder / "METADATA", 1024, stop=b"\n\n")
    assert head.endswith(b"Version: 0.13.0\n\n") and len(head) < 100
    assert facts_for(tmp_path, site)["pkg.peft.version"] == "0.13.0"


def test_egg_info_folder_and_file(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "apex-0.1-py3.11.egg-info").mkdir(parents=True)
    (site / "apex-0.1-py3.11.egg-info" / "PKG-INFO").write_text(
        "Metadata-Version: 1.0\nName: apex\nVersion: 0.1\n")
    (site / "megatron_core-0.9.0-py3.11.egg-info").write_text(  # old single-file form
        "Metadata-Version: 1.0\nName: megatron_core\nVersion: 0.9.0\n")
    f = facts_for(tmp_path, site)
    assert f["pkg.apex.version"] == "0.1" and f["pkg.megatron-core.version"] == "0.9.0"
    assert f["pkg.broken"] == []


def test_metadata_body_does_not_override_header(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "accelerate", "1.2.1")  # its long description contains "Version: 0.0"
    assert facts_for(tmp_path, site)["pkg.accelerate.version"] == "1.2.1"


@pytest.mark.parametrize("text, expected", [
    (CUDA_VERSION_PY, {"cuda.torch_build": "12.4", "cuda.torch_variant": "cuda"}),
    (CPU_VERSION_PY, {"cuda.torch_variant": "cpu"}),
    (NGC_VERSION_PY, {"cuda.torch_build": "12.5", "cuda.torch_variant": "cuda"}),
    (ROCM_VERSION_PY, {"cuda.torch_hip": "6.2.41133-dd7f95766", "cuda.torch_variant": "rocm"}),
], ids=["cuda", "cpu", "ngc", "rocm"])
def test_torch_version_py(tmp_path: Path, text: str, expected: dict) -> None:
    path = tmp_path / "version.py"
    path.write_text(text)
    f = torch_build_facts(path)
    for key, value in expected.items():
        assert f[key] == value
    if expected["cuda.torch_variant"] != "cuda":
        assert "cuda.torch_build" not in f  # CPU/ROCm builds have no CUDA build: absent


def test_torch_version_py_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    path = tmp_path / "version.py"
    path.write_text(f"open({str(marker)!r}, 'w').close()\n" + CUDA_VERSION_PY)
    assert read_torch_version_file(path)["cuda"] == "12.4"
    assert not marker.exists()


def test_torch_version_py_broken_or_missing(tmp_path: Path) -> None:
    bad = tmp_path / "version.py"
    bad.write_text("__version__ = '2.5.1\ncuda = (\n")
    f = torch_build_facts(bad)
    build = f["cuda.torch_build"]
    assert isinstance(build, Unknown) and "SyntaxError" in build.reason
    build = torch_build_facts(tmp_path / "nope.py")["cuda.torch_build"]
    assert isinstance(build, Unknown) and "not found" in build.reason


def test_torch_version_py_with_non_literal_values(tmp_path: Path) -> None:
    # {[]: 1} parses but is no literal (TypeError in literal_eval): skip it, keep the rest.
    path = tmp_path / "version.py"
    path.write_text("x = {[]: 1}\ny = f(2)\n__version__ = '2.5.1+cu124'\ncuda = '12.4'\n")
    assert torch_build_facts(path)["cuda.torch_build"] == "12.4"
    path.write_bytes(b"cuda = '12.4'\x00\n")   # a NUL byte: ValueError from the parser
    assert isinstance(torch_build_facts(path)["cuda.torch_build"], Unknown)


def test_scan_is_one_pass_over_real_environment() -> None:
    found = scan()
    names = [i.name for i in found.installed]
    assert "pytest" in names and "packaging" in names
    assert all(i.version for i in found.installed)


def test_real_environment_matches_importlib_metadata() -> None:
    result = probe_packages()
    f = result.facts
    assert_registered(f)
    for dist in ("torch", "torchao", "nvidia-ml-py"):
        try:
            expected = md.version(dist)
        except md.PackageNotFoundError:
            assert f"pkg.{dist}.version" not in f
            continue
        assert f[f"pkg.{dist}.version"] == expected
    if "pkg.torch.version" in f:  # torch's own version.py, read as text, agrees with its metadata
        assert f["cuda.torch_variant"] in ("cuda", "cpu", "rocm", "xpu")
        local = f.get("pkg.torch.local", "")
        if local == "cpu":
            assert f["cuda.torch_variant"] == "cpu" and "cuda.torch_build" not in f
        if local.startswith("cu"):
            assert f["cuda.torch_build"].replace(".", "") == local[2:]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_check_end_to_end_with_a_dev_zero_and_a_fifo_metadata_on_sys_path(tmp_path: Path) -> None:
    # issue 13 item 2 as reported: the whole `fp8-doctor check`, with such distributions on
    # PYTHONPATH, used to reach the OOM killer (/dev/zero) or hang forever (FIFO).
    import json
    import subprocess
    import sys

    site = tmp_path / "site"
    (make_dist(site, "zero", "1.0", metadata="") / "METADATA").symlink_to("/dev/zero")
    os.mkfifo(make_dist(site, "fifo", "1.0", metadata="") / "METADATA")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(root)])}
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "preflight", "check", "--no-smoke", "--format",
                          "json"], capture_output=True, text=True, timeout=120, env=env,
                         cwd=tmp_path)
    assert time.monotonic() - start < 60
    assert out.returncode in (0, 1), out.stderr[-2000:]
    broken = " | ".join(json.loads(out.stdout)["facts"]["pkg.broken"])
    assert "zero-1.0.dist-info: metadata is a character device" in broken
    assert "fifo-1.0.dist-info: metadata is a FIFO" in broken


def _paths(dists: Iterable[Any]) -> list[str]:
    return [str(d._path) for d in dists]


def test_the_listing_finds_what_importlib_metadata_finds_in_its_order(tmp_path: Path) -> None:
    # discover() lists dist-info folders itself (importlib.metadata costs ~10 ms to import):
    # the same folders, in the same order, as importlib.metadata on the same path.
    a, b = tmp_path / "a", tmp_path / "b"
    for name, version in (("torch", "2.5.1"), ("Zeta_pkg", "1.0"), ("accelerate", "1.0")):
        make_dist(a, name, version)
    make_dist(b, "torch", "2.4.0")                       # a shadowed second install
    (b / "Legacy.Pkg-0.1.egg-info").mkdir()              # an old setuptools install
    (b / "Legacy.Pkg-0.1.egg-info" / "PKG-INFO").write_text("Name: legacy.pkg\nVersion: 0.1\n")
    egg = tmp_path / "old-1.0-py3.11.egg"                # an .egg folder on the path
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "PKG-INFO").write_text("Name: old\nVersion: 1.0\n")
    (a / "not-a-dist").mkdir()
    path = [str(a), str(tmp_path / "missing"), str(b), str(egg)]
    expected = _paths(md.distributions(path=path))
    assert len(expected) == 6
    assert _paths(_listed(path)) == expected


def test_the_listing_matches_importlib_metadata_on_this_environment() -> None:
    assert _paths(discover()) == _paths(md.distributions())


def test_a_zip_on_the_path_is_left_to_importlib_metadata(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import zipfile

    archive = tmp_path / "deps.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped-1.0.dist-info/METADATA", "Name: zipped\nVersion: 1.0\n")
    monkeypatch.setattr(sys, "path", [str(archive)])
    found = scan()
    assert [(i.name, i.version) for i in found.installed] == [("zipped", "1.0")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_a_fifo_on_pythonpath_is_named_not_opened(tmp_path: Path) -> None:
    # issue 21 item 4: importlib.metadata opened a FIFO on sys.path as a zip and waited forever
    import json
    import subprocess

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "preflight", "check", "--format", "json",
                           "--no-smoke"], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(fifo)})
    assert proc.returncode in (0, 1), proc.stderr
    broken = json.loads(proc.stdout)["facts"]["pkg.broken"]
    # as the report shows the path: under a home folder (a TMPDIR in it) it is ~/...
    assert any(redact_text(str(fifo)) in b and "FIFO" in b for b in broken)


def test_metadata_in_a_zip_on_the_path_is_read_only_to_its_header(tmp_path: Path) -> None:
    # issue 21 item 4: a 1.5 GB METADATA in a zip on PYTHONPATH was decompressed whole (2 GB)
    import tracemalloc
    import zipfile

    archive = tmp_path / "deps.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("torchao-0.12.0.dist-info/METADATA", "w", force_zip64=True) as fh:
            fh.write(b"Metadata-Version: 2.1\nName: torchao\nVersion: 0.12.0\n\n")
            for _ in range(64):
                fh.write(b"x" * (1 << 20))              # a 64 MiB description
    tracemalloc.start()
    try:
        f = facts_for(tmp_path, archive)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert f["pkg.torchao.version"] == "0.12.0"
    assert peak < 16 * 1024 * 1024


def test_a_nightly_pair_of_one_day_is_matched_and_a_source_build_unknown(tmp_path: Path) -> None:
    a = tmp_path / "a"
    make_dist(a, "torch", "2.9.0.dev20250827+cu128")
    make_dist(a, "torchao", "0.13.0.dev20250827+cu128")
    assert facts_for(tmp_path, a)["pkg.torchao.built_with_torch"] is True
    b = tmp_path / "b"
    make_dist(b, "torch", "2.10.0")
    make_dist(b, "torchao", "0.13.0+git1a2b3c4")
    assert isinstance(facts_for(tmp_path, b)["pkg.torchao.built_with_torch"], Unknown)
    c = tmp_path / "c"
    make_dist(c, "torch", "2.9.0")
    make_dist(c, "torchao", "0.12.0")
    assert "pkg.torchao.built_with_torch" not in facts_for(tmp_path, c)
