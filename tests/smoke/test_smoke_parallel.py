"""The smoke step's children side by side (one per part), started early and waiting for their
request, the GPU lock between them, merging their results, and the bytecode cache's trust checks.
Real children on the CPU (real torch); nothing here depends on timing."""

from __future__ import annotations

import importlib.util
import os
import stat
import sys
from pathlib import Path

import pytest

from preflight.smoke import SmokeOptions, parallel, run
from preflight.smoke import cache as bytecode
from preflight.smoke.child import _gpu_lock
from preflight.smoke.runner import ChildRun

HAS_TORCHAO = importlib.util.find_spec("torchao") is not None
fcntl = pytest.importorskip("fcntl")


def test_parts_follow_the_request() -> None:
    assert parallel.parts_for(("scaled_mm",), None, "cpu", True) == ["base"]
    assert parallel.parts_for(("te",), None, "cpu", False) == ["te"]          # named: it runs
    assert "te" not in parallel.parts_for(("auto",), None, "cpu", True)      # auto: no CPU TE
    assert parallel.parts_for(("auto",), ("te",), "cuda", True)[0] == "base"
    assert "torchao" not in parallel.parts_for(("auto",), ("te",), "cuda", True)
    assert parallel.parts_for(("auto",), (), "cuda", False) == ["base"]       # job not FP8
    want = ["base"] + (["torchao"] if HAS_TORCHAO else [])
    assert parallel.parts_for(("auto",), None, "cpu", True) == want


def _run(doc: dict[str, object], status: str = "ok", error: str | None = None,
         seconds: float = 1.0, tail: str = "") -> ChildRun:
    return ChildRun(doc, status, error, 0, seconds, tail, "cuda:0")


def test_merge_keeps_each_parts_results_and_the_first_failure() -> None:
    base = _run({"device_name": "H100", "cc": "9.0", "torch_import_s": 1.0, "done": True,
                 "stage": "done", "scaled_mm": {"engaged": True}, "speed": {"ref_speedup": 1.6}},
                seconds=3.0)
    te = _run({"device_name": "H100", "torch_import_s": 1.2, "te_import_s": 4.0, "stage": "te",
               "done": False, "te": {"available": True},
               "fatal": {"kind": "cuda_error", "stage": "te", "text": "CUDA error: x"}},
              status="crash", error="CUDA error: x (during: te)", seconds=7.0, tail="boom")
    merged = parallel.merge([base, te], ["base", "te"])
    assert merged.status == "crash" and merged.error == "te child: CUDA error: x (during: te)"
    assert merged.doc["scaled_mm"] == {"engaged": True} and merged.doc["te"] == {"available": True}
    assert merged.doc["speed"] == {"ref_speedup": 1.6} and merged.doc["te_import_s"] == 4.0
    assert merged.doc["torch_import_s"] == 1.0 and merged.doc["device_name"] == "H100"
    assert merged.doc["stage"] == "te" and merged.doc["done"] is False
    assert merged.doc["fatal"]["kind"] == "cuda_error"
    assert merged.seconds == 7.0 and merged.stderr_tail == "boom"
    ok = parallel.merge([base, _run({"torchao": {"engaged": True}, "done": True})],
                        ["base", "torchao"])
    assert ok.status == "ok" and ok.error is None and ok.doc["done"] is True


def test_a_busy_gpu_is_recognised_for_a_rerun_alone() -> None:
    busy = _run({}, "crash", "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or "
                "unavailable (during: setup)")
    assert parallel._busy(busy) and not parallel._busy(_run({}, "crash", "killed by SIGSEGV"))


def test_gpu_lock_shared_for_checks_exclusive_for_timings(tmp_path: Path) -> None:
    lock = tmp_path / "gpu.lock"
    lock.write_text("")
    probe = os.open(lock, os.O_RDWR)
    try:
        with _gpu_lock(str(lock), exclusive=False):
            fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)    # another check may run
            fcntl.flock(probe, fcntl.LOCK_UN)
            with pytest.raises(BlockingIOError):                 # a timing may not
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with _gpu_lock(str(lock), exclusive=True):
            with pytest.raises(BlockingIOError):                 # nothing runs beside a timing
                fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)        # released after
    finally:
        os.close(probe)
    with _gpu_lock(None, exclusive=True):                        # no lock asked for: no-op
        pass


@pytest.mark.skipif(not HAS_TORCHAO, reason="torchao is not installed")
def test_early_children_take_their_request_and_run_side_by_side() -> None:
    opts = SmokeOptions(device="cpu", timeout=120, speed=False)
    early = parallel.prestart(opts, ["base", "torchao"])
    assert early is not None and set(early.lives) == {"base", "torchao"}
    out = run({}, opts, early=early)
    assert out.details["started_early"] is True
    assert set(out.details["children"]) == {"base", "torchao"}
    assert out.facts["smoke.status"] == "ok", out.facts
    assert out.facts["smoke.backends"] == ["scaled_mm", "torchao"]
    assert out.facts["smoke.torchao.engaged"] is True and out.facts["smoke.scaled_mm.engaged"]
    early.cancel()   # already used: nothing to end, no error


def test_an_early_child_the_job_does_not_need_is_ended() -> None:
    opts = SmokeOptions(device="cpu", timeout=120, speed=False)
    early = parallel.prestart(opts, ["base", "torchao"])
    assert early is not None
    out = run({"intent.backend": "te"}, opts, early=early)       # TE: no CPU path under auto
    assert out.details["children"] == {"base": pytest.approx(out.details["children"]["base"])}
    assert "torchao" not in out.facts["smoke.backends"]
    torchao_child = early.lives["torchao"]
    assert not isinstance(torchao_child, ChildRun)
    assert torchao_child.child.proc is not None and torchao_child.child.proc.poll() is not None
    assert not os.path.exists(torchao_child.workdir)


def test_a_cancelled_prestart_leaves_nothing() -> None:
    early = parallel.prestart(SmokeOptions(device="cpu", timeout=60), ["base"])
    assert early is not None
    live = early.lives["base"]
    assert not isinstance(live, ChildRun)
    early.cancel()
    assert live.child.proc is not None and live.child.proc.poll() is not None
    assert not os.path.exists(live.workdir)


def test_prestart_is_off_without_a_gpu_request() -> None:
    from preflight.smoke import prestart

    assert prestart(SmokeOptions(device="cpu"), None) is None
    assert prestart(SmokeOptions(), False) is None
    assert prestart(SmokeOptions(command=(sys.executable, "-c", "pass")), True) is None


# ------------------------------------------------------------------ the bytecode cache
def _pkg_without_bytecode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    pkg = tmp_path / "src" / "nobytecodepkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    return "nobytecodepkg"


def test_cache_is_used_only_where_bytecode_is_missing(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    name = _pkg_without_bytecode(tmp_path, monkeypatch)
    root = tmp_path / "cache" / "fp8-doctor"
    got = bytecode.resolve([name], folder=str(root), env={})
    assert got.status == "filling" and got.fill is not None    # cold: a filler's job first
    assert got.fill.prefix == str(root / "pycache") and got.prefix is None
    bytecode.write_marker(got.fill.marker, got.fill.key, str(sys.implementation.cache_tag), {})
    got = bytecode.resolve([name], folder=str(root), env={})
    assert got.status == "used" and got.prefix == str(root / "pycache")
    for folder in (root, root / "pycache"):
        assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700
    assert bytecode.resolve([name], enabled=False, folder=str(root), env={}).status == "off"
    assert bytecode.resolve([name], folder=str(root),
                            env={bytecode.ENV_OFF: "1"}).status == "off"
    compiled = tmp_path / "src" / "nobytecodepkg" / "__pycache__"
    compiled.mkdir()
    (compiled / f"__init__.{sys.implementation.cache_tag}.pyc").write_bytes(b"")
    assert bytecode.resolve([name], folder=str(root), env={}).status == "not needed"


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX ownership")
@pytest.mark.parametrize("attack", ["group-writable", "world-writable", "symlink",
                                    "parent-world-writable", "a-file"])
def test_an_untrustworthy_cache_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  attack: str) -> None:
    name = _pkg_without_bytecode(tmp_path, monkeypatch)
    parent = tmp_path / "cache"
    parent.mkdir(mode=0o700)
    root = parent / "fp8-doctor"
    if attack == "symlink":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        root.symlink_to(tmp_path / "elsewhere")
    elif attack == "a-file":
        root.write_text("")
    else:
        root.mkdir(mode=0o700)
        target = parent if attack == "parent-world-writable" else root
        os.chmod(target, 0o770 if attack == "group-writable" else 0o777)
    got = bytecode.resolve([name], folder=str(root), env={})
    assert got.status == "refused" and got.prefix is None
    assert str(parent) in got.reason


def test_a_cache_inside_a_git_work_tree_is_refused(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Red team (issue 21): a cache kept in the CI workspace (``--cache-dir .cache/fp8-doctor``,
    for the CI's cache action) is a folder a pull request ships files into, owned by the runner
    and not writable by others; a planted unchecked-hash .pyc (PEP 552: never compared with its
    source) and a marker made the children import it. A work tree's folder is refused."""
    import py_compile

    name = _pkg_without_bytecode(tmp_path, monkeypatch)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    root = repo / ".cache" / "fp8-doctor"
    root.mkdir(parents=True, mode=0o700)
    (repo / ".cache").chmod(0o700)
    source = tmp_path / "src" / name / "__init__.py"
    planted = tmp_path / "planted.py"
    planted.write_text("import os\nos.environ['PWNED'] = '1'\n")
    pyc = Path(str(root / "pycache") + str(source.parent)) / \
        f"__init__.{sys.implementation.cache_tag}.pyc"
    pyc.parent.mkdir(parents=True)
    py_compile.compile(str(planted), cfile=str(pyc),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    key = bytecode.fingerprint({name: str(source)})
    bytecode.write_marker(str(root / bytecode.MARKER), key, str(sys.implementation.cache_tag), {})
    got = bytecode.resolve([name], folder=str(root), env={})
    assert got.status == "refused" and got.prefix is None and got.fill is None
    assert str(repo) in got.reason and "git work tree" in got.reason
    (repo / ".git").rmdir()           # the same folder outside a work tree: used as before
    assert bytecode.resolve([name], folder=str(root), env={}).status == "used"


def test_cache_location_follows_env_then_xdg_then_home(tmp_path: Path) -> None:
    assert bytecode.default_dir({bytecode.ENV_DIR: "/x/y"}) == "/x/y"
    assert bytecode.default_dir({"XDG_CACHE_HOME": "/xdg"}) == "/xdg/fp8-doctor"
    home = os.path.join(os.path.expanduser("~"), ".cache", "fp8-doctor")
    assert bytecode.default_dir({"XDG_CACHE_HOME": "relative"}) == home
    assert bytecode.default_dir({}) == home


def test_a_child_with_the_cache_writes_its_bytecode_there(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    name = _pkg_without_bytecode(tmp_path, monkeypatch)
    cold = bytecode.resolve([name], folder=str(tmp_path / "c"), env={})
    assert cold.fill is not None
    bytecode.write_marker(cold.fill.marker, cold.fill.key, str(sys.implementation.cache_tag), {})
    cache = bytecode.resolve([name], folder=str(tmp_path / "c"), env={})   # complete: read it
    assert cache.prefix
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")   # the GPU image's setting
    monkeypatch.setattr(parallel, "resolve_cache", lambda opts, parts: cache)
    out = run({}, SmokeOptions(device="cpu", backends=("scaled_mm",), timeout=120, speed=False))
    assert out.facts["smoke.status"] == "ok"
    assert out.details["bytecode_cache"]["status"] == "used"
    written = list(Path(cache.prefix).rglob("*.pyc"))
    assert any(p.name.startswith("child.") for p in written)     # preflight/smoke/child.py
