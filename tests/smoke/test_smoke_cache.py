"""The bytecode cache's filling policy (issue 26): on a cold cache the smoke children run as with
``--no-cache`` and one low-priority filler with no GPU writes the prefix and the marker, last; on
a complete cache the children read the prefix; an untrusted folder gets neither. Real filler
children on the CPU; nothing here depends on timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from preflight.smoke import SmokeOptions, parallel
from preflight.smoke import cache as bytecode
from preflight.smoke.cache import Cache, Fill, Launch
from preflight.smoke.runner import ChildRun

pytest.importorskip("fcntl")
TAG = str(sys.implementation.cache_tag)


def _pkg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str = "coldpkg",
         body: str = "VALUE = 1\n") -> str:
    """A package with no bytecode beside it, importable here and by children (PYTHONPATH)."""
    src = tmp_path / "src"
    pkg = src / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(body)
    (pkg / "helper.py").write_text("HELPER = 2\n")
    monkeypatch.syspath_prepend(str(src))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(src), os.environ.get("PYTHONPATH", "")) if p))
    return name


def _mark_complete(cache: Cache) -> None:
    assert cache.fill is not None
    bytecode.write_marker(cache.fill.marker, cache.fill.key, TAG, {})


# ------------------------------------------------------------------ the policy
def test_cold_warm_and_untrusted_caches_launch_children_differently(tmp_path: Path) -> None:
    prefix = str(tmp_path / "c" / "pycache")
    fill = Fill(prefix, str(tmp_path / "c" / bytecode.MARKER), {"torch": ["/x", 1, 2]})
    cold = Cache(None, "filling", "cold", fill)
    warm = Cache(prefix, "used", "complete")
    smoke_cold = bytecode.launch(cold, "smoke")
    assert smoke_cold == Launch()                     # exactly as --no-cache: nothing changed
    filler = bytecode.launch(cold, "filler")
    assert filler.flags == ("-X", f"pycache_prefix={prefix}")
    assert filler.set_env == {"CUDA_VISIBLE_DEVICES": ""}       # it imports only: no GPU
    assert set(filler.drop_env) == {"PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"}
    smoke_warm = bytecode.launch(warm, "smoke")
    assert smoke_warm.flags == ("-X", f"pycache_prefix={prefix}")
    assert "CUDA_VISIBLE_DEVICES" not in smoke_warm.set_env
    assert set(smoke_warm.drop_env) == {"PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"}
    for status in ("off", "not needed", "refused"):
        other = Cache(None, status, "why")
        assert bytecode.launch(other, "smoke") == Launch()
        with pytest.raises(ValueError):
            bytecode.launch(other, "filler")
    with pytest.raises(ValueError):
        bytecode.launch(warm, "filler")                 # a complete cache has no filler


class _Spawned:
    """Records what parallel.prestart / run_parts ask runner.spawn for (our own interface)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any] | None, timeout: float, *,
                 env: Any = None, part: str | None = None, launch: Launch | None = None,
                 command: Any = None) -> ChildRun:
        self.calls.append({"request": request, "part": part, "launch": launch or Launch()})
        return ChildRun({}, "crash", "not started (test)", None, 0.0, "", "cuda")


@pytest.mark.parametrize("state", ["cold", "warm", "untrusted", "off"])
def test_which_child_gets_which_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      state: str) -> None:
    name = _pkg(tmp_path, monkeypatch)
    root = tmp_path / "cache" / "fp8-doctor"
    monkeypatch.setattr(parallel, "MODULES", {"base": (name,), "te": (name,)})
    monkeypatch.setattr(parallel, "IMPORTS", {"base": (name,), "te": (name, f"{name}.helper")})
    if state == "warm":
        _mark_complete(bytecode.resolve([name], folder=str(root), env={}))
    if state == "untrusted":
        root.mkdir(parents=True)
        os.chmod(root, 0o777)
    spawned = _Spawned()
    monkeypatch.setattr(parallel, "spawn", spawned)
    opts = SmokeOptions(timeout=30, cache_dir=str(root), cache=state != "off")
    early = parallel.prestart(opts, ["base", "te"])
    assert early is not None
    smoke = [c for c in spawned.calls if c["part"]]
    fillers = [c for c in spawned.calls if not c["part"]]
    assert [c["part"] for c in smoke] == ["te", "base"]          # the slowest starts first
    assert all(c["request"] is None for c in smoke)              # they wait for the facts
    prefix = f"pycache_prefix={root / 'pycache'}"
    if state == "cold":
        assert early.cache.status == "filling"
        assert all(c["launch"] == Launch() for c in smoke)
        assert len(fillers) == 1
        launch, request = fillers[0]["launch"], fillers[0]["request"]["fill"]
        assert launch.flags == ("-X", prefix) and launch.set_env == {"CUDA_VISIBLE_DEVICES": ""}
        assert request["imports"] == [name, f"{name}.helper"]
        assert request["marker"] == str(root / bytecode.MARKER)
        assert set(request["key"]) == {name}
    elif state == "warm":
        assert early.cache.status == "used" and not fillers
        assert all(c["launch"].flags == ("-X", prefix) for c in smoke)
    else:
        assert early.cache.status == ("refused" if state == "untrusted" else "off")
        assert not fillers and all(c["launch"] == Launch() for c in smoke)
    early.cancel()


# ------------------------------------------------------------------ the marker
def test_the_marker_makes_a_cache_complete_until_a_package_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = _pkg(tmp_path, monkeypatch)
    root = tmp_path / "cache"
    cold = bytecode.resolve([name], folder=str(root), env={})
    assert cold.status == "filling" and cold.prefix is None and cold.fill is not None
    assert cold.as_details()["dir"] == str(root / "pycache")
    _mark_complete(cold)
    warm = bytecode.resolve([name], folder=str(root), env={})
    assert warm.status == "used" and warm.prefix == str(root / "pycache")
    # another interpreter's fill is kept beside ours
    bytecode.write_marker(str(root / bytecode.MARKER), {"other": ["/o", 1, 1]}, "cpython-99", {})
    assert bytecode.resolve([name], folder=str(root), env={}).status == "used"
    # the package is reinstalled (its source changes): the cache is filled again
    init = tmp_path / "src" / name / "__init__.py"
    init.write_text("VALUE = 22\n")
    os.utime(init, ns=(1, 1))
    assert bytecode.resolve([name], folder=str(root), env={}).status == "filling"


@pytest.mark.parametrize("bad", ["symlink", "garbage", "huge", "list", "other-modules"])
def test_a_marker_that_is_not_a_fillers_record_means_cold(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          bad: str) -> None:
    name = _pkg(tmp_path, monkeypatch)
    root = tmp_path / "cache"
    cold = bytecode.resolve([name], folder=str(root), env={})
    assert cold.fill is not None
    marker = Path(cold.fill.marker)
    if bad == "symlink":
        real = tmp_path / "real.json"
        real.write_text(json.dumps({"filled": {TAG: cold.fill.key}}))
        marker.symlink_to(real)
    elif bad == "garbage":
        marker.write_bytes(b"\xff{not json")
    elif bad == "huge":
        marker.write_text(json.dumps({"filled": {TAG: cold.fill.key},
                                      "pad": "x" * bytecode.MARKER_MAX_BYTES}))
    elif bad == "list":
        marker.write_text("[1, 2]")
    else:
        marker.write_text(json.dumps({"filled": {TAG: {"torch": ["/t", 1, 1]}}}))
    assert bytecode.resolve([name], folder=str(root), env={}).status == "filling"


# ------------------------------------------------------------------ a real filler child
FILLER_S = 250
"""The filler runs at the lowest priority (nice 19, SCHED_IDLE, its session's group at nice 19):
on a loaded machine it gets a sliver of a core, so its bounds are generous (under pytest's 300 s)."""


def _wait(live: Any, timeout: float = FILLER_S) -> None:
    """Wait for a child to end on its own (bounded; the assertions after it say what ended)."""
    try:
        live.child.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass


def test_a_filler_writes_bytecode_then_the_marker(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    name = _pkg(tmp_path, monkeypatch)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")     # the GPU image's setting
    root = tmp_path / "cache"
    cold = bytecode.resolve([name], folder=str(root), env={}).with_imports(
        [name, f"{name}.helper", "no_such_module_fp8d"])
    live = parallel.start_filler(SmokeOptions(timeout=FILLER_S), cold)
    assert live is not None and not isinstance(live, ChildRun)
    _wait(live)
    said = parallel.end_filler(live, 120)
    assert said is not None and said.startswith("complete") and "no_such_module_fp8d" in said
    written = {p.name.split(".")[0] for p in (root / "pycache").rglob("*.pyc")}
    assert {"__init__", "helper", "child", "cache"} <= written   # the package and our own
    doc = json.loads((root / bytecode.MARKER).read_text())
    assert doc["filled"][TAG] == cold.fill.key if cold.fill else False
    assert "no_such_module_fp8d" in doc["errors"]                # failed, recorded, still done
    assert bytecode.resolve([name], folder=str(root), env={}).status == "used"
    assert not os.path.exists(live.workdir)


def test_a_filler_killed_midway_leaves_no_marker(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    name = _pkg(tmp_path, monkeypatch, "slowpkg",
                "from slowpkg import helper\nimport time\ntime.sleep(300)\n")
    root = tmp_path / "cache"
    cold = bytecode.resolve([name], folder=str(root), env={}).with_imports([name])
    live = parallel.start_filler(SmokeOptions(timeout=FILLER_S), cold)
    assert live is not None and not isinstance(live, ChildRun)
    helper = None
    while helper is None and not live.child.done() and not live.child.expired():
        helper = next((p for p in (root / "pycache").rglob("helper.*.pyc")), None)
        if helper is None:   # not inside the import yet
            _wait(live, 0.2)
    assert helper is not None                          # it had written part of the cache
    said = parallel.end_filler(live, 120)
    assert said is not None and said.startswith("stopped")
    assert not (root / bytecode.MARKER).exists()
    assert bytecode.resolve([name], folder=str(root), env={}).status == "filling"
    assert live.child.proc is not None and live.child.proc.poll() is not None
    assert not os.path.exists(live.workdir)


def test_a_cold_smoke_run_says_the_cache_is_filling(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    name = _pkg(tmp_path, monkeypatch)
    monkeypatch.setattr(parallel, "MODULES", {**parallel.MODULES, "base": ("torch", name)})
    from preflight.smoke import run

    out = run({}, SmokeOptions(device="cpu", backends=("scaled_mm",), timeout=120, speed=False,
                               cache_dir=str(tmp_path / "cache")))
    assert out.facts["smoke.status"] == "ok", out.facts
    got = out.details["bytecode_cache"]
    # torch has bytecode here; the package has none: the cache is cold and a filler ran
    assert got["status"] == "filling" and got["dir"] == str(tmp_path / "cache" / "pycache")
    assert got["filler"].startswith(("complete", "stopped"))


@pytest.mark.skipif(not os.path.exists("/proc/self/autogroup"), reason="Linux autogroups")
@pytest.mark.parametrize("own_session", [True, False])
def test_the_filler_yields_the_cpu_and_lowers_only_its_own_session(own_session: bool) -> None:
    """nice and SCHED_IDLE weigh nothing against other sessions where the kernel groups by
    session (the checks each run in one); the filler lowers its own session's group, and never
    the caller's."""
    code = ("import os, json; from preflight.smoke.cache import lowest_priority; "
            "done = lowest_priority(); "
            "print(json.dumps([done, os.nice(0), os.sched_getscheduler(0) == os.SCHED_IDLE, "
            "open('/proc/self/autogroup').read()]))")
    before = open("/proc/self/autogroup").read()
    # Not its own session: still a process group of its own (setpgid, same session), so a signal
    # or terminal job control aimed at pytest's group cannot end the child before it prints (a
    # fresh-clone CI run once got an empty stdout here; the reason is now in the message).
    # process_group (3.11+) does the setpgid in C: a preexec_fn runs Python between fork and exec,
    # which may deadlock where pytest has threads (the subprocess docs' warning).
    group: dict[str, Any] = ({} if own_session else {"process_group": 0}
                             if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp})
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60, start_new_session=own_session,
                          **group)
    assert proc.returncode == 0 and proc.stdout.strip(), (proc.returncode, proc.stderr[-2000:])
    done, nice, idle, group_text = json.loads(proc.stdout)
    assert nice == 19 and idle is True
    assert ("autogroup nice 19" in done) is own_session
    # The kernel prints nothing for the default autogroup (sched/autogroup.c,
    # proc_sched_autogroup_show_task): a session that never called setsid since boot, such as a
    # container's first one where CI runs pytest, reads "" (a fresh-clone CI run failed here on
    # `.split()[-1]`). A new session gets a group of its own, always shown; the same session
    # shows the caller's group, as the caller reads it.
    if own_session:
        assert group_text.split()[-1:] == ["19"]
    else:
        assert group_text == before
    assert open("/proc/self/autogroup").read() == before      # ours untouched
