"""Import probe: real child processes importing fake broken modules, and real torch."""

from __future__ import annotations

import importlib.metadata as md
import os
import shutil
import time
from pathlib import Path

import pytest
from hostenv import require_exec
from probe_fakes import assert_registered

from preflight.probes.imports import classify, import_facts, probe_imports

# Fake top-level modules, each failing the way a real broken install does.
FAKE_MODULES = {
    "fake_abi": "raise ImportError('/usr/lib/python3/site-packages/transformer_engine_torch"
                ".cpython-311-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi')",
    "fake_nolib": "raise OSError('libcudnn_graph.so.9: cannot open shared object file: "
                  "No such file or directory')",
    "fake_mismatch": "raise AssertionError('Transformer Engine package version mismatch. Found "
                     "transformer_engine_torch v1.10.0, transformer-engine v1.9.0, and "
                     "transformer-engine-cu12 v1.9.0.')",
    "fake_emptymeta": "raise RuntimeError('Found empty `transformer-engine` meta package "
                      "installed. Install it with extras.')",
    "fake_dep": "import fp8_doctor_no_such_dependency_xyz",
    "fake_other": "raise ValueError('something odd')",
    "fake_hang": "import time\ntime.sleep(600)",
    "fake_crash": "import os\nos.abort()",
    "fake_ok": "__version__ = '1.2.3'",
}


@pytest.fixture
def fake_env(tmp_path: Path) -> dict[str, str]:
    for name, body in FAKE_MODULES.items():
        (tmp_path / f"{name}.py").write_text(body + "\n")
    return {**os.environ, "PYTHONPATH": str(tmp_path)}


@pytest.mark.parametrize("module, kind", [
    ("fake_abi", "abi_undefined_symbol"),
    ("fake_nolib", "missing_library"),
    ("fake_mismatch", "version_mismatch"),
    ("fake_emptymeta", "broken_install"),
    ("fake_dep", "missing_dependency"),
    ("fake_other", "other"),
    ("fp8_doctor_not_installed_xyz", "not_installed"),
])
def test_failures_are_classified(fake_env: dict[str, str], module: str, kind: str) -> None:
    f = import_facts([module], env=fake_env, timeout=60)
    assert_registered(f)
    assert f[f"import.{module}.ok"] is False
    assert f[f"import.{module}.error_kind"] == kind, f[f"import.{module}.error"]
    assert f[f"import.{module}.error"]


def test_a_source_tree_in_the_current_directory_is_not_imported(
        fake_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run inside a checkout of the package: the probe must import what is installed."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "fake_ok.py").write_text("raise ImportError('imported the source tree')\n")
    monkeypatch.chdir(checkout)
    f = import_facts(["fake_ok"], env=fake_env, timeout=60)
    assert f["import.fake_ok.ok"] is True, f.get("import.fake_ok.error")
    assert f["import.fake_ok.version"] == "1.2.3"


def test_ok_timeout_and_crash_in_parallel(fake_env: dict[str, str]) -> None:
    # The import and the crash must end on their own; only the hang (600 s) runs into the
    # timeout. 10 s first (the hang waits that long); where a loaded machine did not even start
    # the other two in it, once more with 60 s: the load does not decide the outcome.
    for timeout in (10.0, 60.0):
        start = time.monotonic()
        f = import_facts(["fake_ok", "fake_hang", "fake_crash"], env=fake_env, timeout=timeout)
        elapsed = time.monotonic() - start
        if "timeout" not in (f.get("import.fake_ok.error_kind"),
                             f.get("import.fake_crash.error_kind")):
            break
    assert elapsed < timeout + 18, f"took {elapsed:.1f} s with a {timeout:g} s timeout"
    assert f["import.fake_ok.ok"] is True and f["import.fake_ok.version"] == "1.2.3"
    assert f["import.fake_hang.error_kind"] == "timeout"
    assert f"within {timeout:g} s" in f["import.fake_hang.error"]
    assert f["import.fake_crash.error_kind"] == "crash"
    assert "SIGABRT" in f["import.fake_crash.error"]
    assert_registered(f)


@pytest.mark.parametrize("error, kind", [
    ("ImportError: /x/transformer_engine_torch.so: undefined symbol: _ZN3c10",
     "abi_undefined_symbol"),
    ("FileNotFoundError: Could not find shared object file for Transformer Engine torch lib.",
     "missing_library"),
    ("RuntimeError: cudnn shared object not found.", "missing_library"),
    ("AssertionError: TransformerEngine package version mismatch. Found ...", "version_mismatch"),
    ("AssertionError: Minimum torch version 2.1 required", "version_mismatch"),
    ("RuntimeError: Could not find TE core package `transformer-engine-cu*`.", "broken_install"),
    ("ModuleNotFoundError: No module named 'deepspeed'", "not_installed"),
])
def test_classify_upstream_messages(error: str, kind: str) -> None:
    missing = "deepspeed" if "deepspeed" in error else None
    assert classify("deepspeed" if missing else "transformer_engine", error, missing) == kind


@pytest.mark.slow
def test_real_torch_import_agrees_with_metadata() -> None:
    """Real child import of torch (seconds); its facts agree with the metadata-only probe."""
    try:
        md.version("torch")
    except md.PackageNotFoundError:
        pytest.skip("torch is not installed")
    from preflight.probes.packages import probe_packages

    result = probe_imports(["torch", "fp8_doctor_not_installed_xyz"], timeout=120)
    f = result.facts
    assert_registered(f)
    assert f["import.torch.ok"] is True, f.get("import.torch.error")
    # torch.__version__ may carry a local label its metadata lacks (2.11.0+cu130 vs 2.11.0 on the
    # GPU machine's image); the release must agree.
    assert f["import.torch.version"].split("+")[0] == md.version("torch").split("+")[0]
    assert f["import.fp8_doctor_not_installed_xyz.error_kind"] == "not_installed"
    static = probe_packages().facts
    assert f.get("import.torch.cuda_version") == static.get("cuda.torch_build")
    if static.get("cuda.torch_variant") == "cpu":
        assert f["import.torch.cuda_available"] is False


# Without setsid(1) (util-linux) the grandchild stays in the group and the test proves nothing.
@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs the setsid command")
def test_timeout_is_bounded_when_a_grandchild_escapes_and_holds_the_pipes(tmp_path: Path) -> None:
    # A "python" whose child leaves the process group (setsid) and keeps stdout open: killing
    # the group cannot close the pipes, so reading the output after the kill must be bounded.
    import signal

    require_exec(tmp_path)
    pidfile = tmp_path / "escaped.pid"
    fake_python = tmp_path / "python"
    fake_python.write_text(f"#!/bin/sh\nsetsid sh -c 'echo $$ > {pidfile}; exec sleep 60' &\n"
                           "sleep 60\n")
    fake_python.chmod(0o755)
    t0 = time.monotonic()
    try:
        f = import_facts(["torch"], timeout=0.5, python=str(fake_python))
    finally:
        if pidfile.exists():
            try:
                os.kill(int(pidfile.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert time.monotonic() - t0 < 30       # far under the 60 s the escapee holds the pipes
    assert f["import.torch.error_kind"] == "timeout"


def test_unstartable_python_is_a_crash_fact(tmp_path: Path) -> None:
    f = import_facts(["torch"], timeout=5, python=str(tmp_path / "no-python"))
    assert f["import.torch.ok"] is False and f["import.torch.error_kind"] == "crash"
    assert "cannot start" in f["import.torch.error"]


def test_an_import_that_prints_without_end_is_stopped_at_the_cap(tmp_path: Path) -> None:
    # issue 13 item 2: child output is capped while read; the import probe says so.
    import sys

    (tmp_path / "chatty").mkdir()
    (tmp_path / "chatty" / "__init__.py").write_text(
        "import sys\nwhile True: sys.stderr.write('warning ' * 8192)\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    facts = import_facts(("chatty",), timeout=60, env=env, python=sys.executable)
    assert facts["import.chatty.ok"] is False and facts["import.chatty.error_kind"] == "crash"
    assert "killed: output over" in facts["import.chatty.error"]
    assert facts["import.chatty.seconds"] < 30


def test_te_without_its_torch_extension_is_not_ok(tmp_path: Path) -> None:
    """TE 2.x's top package imports without its torch library; only transformer_engine.pytorch
    fails (seen with TE 2.20.2 on the GPU machine, the extension removed: issue 15)."""
    pkg = tmp_path / "transformer_engine"
    (pkg / "pytorch").mkdir(parents=True)
    (pkg / "__init__.py").write_text("__version__ = '2.20.2'\n")
    (pkg / "pytorch" / "__init__.py").write_text(
        "raise FileNotFoundError('Could not find shared object file for Transformer Engine "
        "torch lib.')\n")
    f = import_facts(["transformer_engine"], env={**os.environ, "PYTHONPATH": str(tmp_path)},
                     timeout=60)
    assert f["import.transformer_engine.ok"] is False
    assert f["import.transformer_engine.error_kind"] == "missing_library"
