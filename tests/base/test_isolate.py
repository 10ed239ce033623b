"""preflight/base/isolate.py and the private working folder of every child (issue 21 item 1).

The end-to-end promise (planted shadows, every entry point) is tests/test_shadows.py; here the
rules themselves: which PYTHONPATH entries a child gets, that fp8-doctor's own package stays
importable, that a child's working folder is private and removed, and what the entry points take
off their own sys.path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from preflight.base import isolate, proc

REPO = Path(__file__).resolve().parents[2]


def test_pythonpath_keeps_the_users_entries_and_drops_the_job_and_the_cwd(
        tmp_path: Path) -> None:
    job, cwd, site = tmp_path / "job", tmp_path / "here", tmp_path / "site"
    for folder in (job / "lib", cwd / "src", site):
        folder.mkdir(parents=True)
    raw = os.pathsep.join(["", ".", "rel/lib", str(site), str(cwd), str(job / "lib"), str(job),
                           str(tmp_path), str(cwd / "src")])
    kept, dropped = isolate.split_pythonpath(raw, cwd=str(cwd), roots=[str(job)])
    # Above the job and the cwd (a TE build in ~ while the job is ~/job, PYTHONPATH=/tmp/site
    # run from /tmp), or pointed into the cwd by the user: the user's own environment, kept.
    assert kept == [str(site), str(tmp_path), str(cwd / "src")]
    assert dropped == ["", ".", "rel/lib", str(cwd), str(job / "lib"), str(job)]


def test_a_config_files_folder_is_dropped_but_not_what_is_under_it(tmp_path: Path,
                                                                   monkeypatch) -> None:
    # `fp8-doctor check ~/ds.json` makes ~ no job: ~/TransformerEngine stays, ~ itself goes.
    monkeypatch.setattr(isolate, "_roots", {})
    (tmp_path / "TransformerEngine").mkdir()
    (tmp_path / "ds.json").write_text("{}")
    isolate.add_job_roots([str(tmp_path / "ds.json")])
    raw = os.pathsep.join([str(tmp_path), str(tmp_path / "TransformerEngine")])
    assert isolate.split_pythonpath(raw, cwd="/") == ([str(tmp_path / "TransformerEngine")],
                                                      [str(tmp_path)])
    isolate.add_job_roots([str(tmp_path)])   # the folder itself named: now all of it is the job
    assert isolate.split_pythonpath(raw, cwd="/") == ([], raw.split(os.pathsep))


def test_the_entry_points_say_which_entries_they_left_out(tmp_path: Path, monkeypatch) -> None:
    said: list[str] = []
    monkeypatch.setattr(isolate, "notice", said.append)
    monkeypatch.setattr(isolate, "_noticed", set())
    monkeypatch.setattr(isolate, "_roots", {str(tmp_path): True})
    raw = os.pathsep.join(["", ".", str(tmp_path / "lib")])
    isolate.python_env({"PYTHONPATH": raw})
    isolate.python_env({"PYTHONPATH": raw})
    assert len(said) == 1 and str(tmp_path / "lib") in said[0] and "job folder" in said[0]


def test_a_symlink_into_the_job_is_dropped_like_the_job(tmp_path: Path) -> None:
    (tmp_path / "job" / "lib").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "job" / "lib")
    kept, dropped = isolate.split_pythonpath(str(tmp_path / "link"), cwd="/",
                                             roots=[str(tmp_path / "job")])
    assert (kept, dropped) == ([], [str(tmp_path / "link")])


def test_job_roots_are_the_folders_given_and_the_folders_of_files_given(tmp_path: Path,
                                                                       monkeypatch) -> None:
    monkeypatch.setattr(isolate, "_roots", {})
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "ds.json").write_text("{}")
    isolate.add_job_roots([str(tmp_path / "a"), str(tmp_path / "b" / "ds.json")])
    assert isolate.job_roots() == (str(tmp_path / "a"),)
    assert isolate._file_folders() == (str(tmp_path / "b"),)


def test_the_child_environment_keeps_the_users_stack_and_finds_preflight(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(isolate, "_roots", {})
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    site = tmp_path / "site"
    site.mkdir()
    env = isolate.python_env({"PATH": os.environ.get("PATH", ""),
                              "PYTHONPATH": os.pathsep.join(["", ".", str(site)])},
                             extra={"X": "1"})
    entries = env["PYTHONPATH"].split(os.pathsep)
    assert str(site) in entries and "" not in entries and "." not in entries
    assert env["X"] == "1"
    # What the child really sees: run it (with a private working folder, as proc.start does).
    code = "import json, sys, preflight; print(json.dumps([sys.path, preflight.__file__]))"
    res = proc.run(isolate.python_argv("-c", code), 60, env=env)
    assert res.returncode == 0, res.stderr
    path, where = json.loads(res.stdout)
    assert str(site) in path
    assert not any(p in ("", ".") or os.path.realpath(p) == str(tmp_path / "here")
                   for p in path)
    assert Path(where).resolve().parent == (REPO / "preflight").resolve()


def test_preflight_is_found_from_a_checkout_given_only_through_pythonpath(
        tmp_path: Path, monkeypatch) -> None:
    # A source checkout used via PYTHONPATH (no install) while the checkout is also the job:
    # the entry is dropped like any entry inside the job, and the package's own folder (the
    # code already running) is put back first, so the child still imports fp8-doctor.
    monkeypatch.setattr(isolate, "_roots", {str(REPO): True})
    monkeypatch.setattr(isolate, "_found_without_pythonpath", lambda root: False)
    env = isolate.python_env({"PYTHONPATH": str(REPO)})
    assert env["PYTHONPATH"].split(os.pathsep) == [isolate.package_root()]


def test_python_children_start_without_the_cwd_on_sys_path() -> None:
    argv = isolate.python_argv("-c", "pass")
    assert argv[0] == sys.executable
    assert ("-P" in argv) == (sys.version_info >= (3, 11))
    assert "-P" not in isolate.python_argv("-c", "pass", executable="/usr/bin/python3")


def test_every_child_starts_in_a_private_empty_folder_removed_afterwards(tmp_path: Path,
                                                                         monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "json.py").write_text("raise SystemExit('shadow imported')\n")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))   # where temp folders go
    (tmp_path / "tmp").mkdir()
    code = ("import os, json; listing = sorted(os.listdir('.')); open('left', 'w').write('x'); "
            "print(json.dumps([os.getcwd(), listing, os.stat('.').st_mode & 0o777]))")
    res = proc.run([sys.executable, "-c", code], 60)   # no -P: the folder alone protects
    assert res.returncode == 0, res.stderr               # json.py here was not imported
    cwd, listing, mode = json.loads(res.stdout)
    assert listing == [] and mode == 0o700
    assert Path(cwd).parent == tmp_path / "tmp"
    assert list((tmp_path / "tmp").iterdir()) == []    # removed, with what the child wrote


def test_kill_all_kills_uncollected_children_and_removes_their_folders(tmp_path: Path,
                                                                        monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    children = [proc.start([sys.executable, "-c", "import time; time.sleep(60)"], 120)
                for _ in range(2)]
    try:
        assert len(list(tmp_path.iterdir())) == 2
    finally:
        killed = proc.kill_all()
    assert killed >= 2
    for child in children:
        assert child.proc is not None and child.proc.poll() is not None
    assert list(tmp_path.iterdir()) == []
    assert proc.kill_all() == 0


def test_entry_points_take_the_cwd_and_unsafe_pythonpath_entries_off_sys_path(
        tmp_path: Path) -> None:
    # prune_sys_path changes the running process's sys.path: run it in a child, as the entry
    # points do, with PYTHONPATH entries of each kind.
    here, site = tmp_path / "here", tmp_path / "site"
    for folder in (here / "inside", site):
        folder.mkdir(parents=True)
    code = ("import json, sys\nfrom preflight.base import isolate\n"
            "before = list(sys.path)\nremoved = isolate.prune_sys_path()\n"
            "print(json.dumps([before, removed, sys.path]))")
    (here / "probe.py").write_text(code)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        ["", "rel", str(here / "inside"), str(site), str(REPO)])}
    res = subprocess.run([sys.executable, "-m", "probe"], cwd=here, env=env,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    before, removed, after = json.loads(res.stdout)
    assert before[0] == str(here)                        # python -m: the cwd, first
    assert set(removed) == {str(here), str(here / "rel")}
    assert str(site) in after and str(REPO) in after and str(here / "inside") in after
    # The rest keeps its order, but PYTHONPATH's entries come after the standard library and
    # site-packages: no folder there can shadow json or yaml in fp8-doctor's own process.
    stdlib = max(i for i, p in enumerate(after) if p.endswith("lib-dynload"))
    assert min(after.index(str(p)) for p in (site, REPO, here / "inside")) > stdlib
    assert sorted(p for p in before if p not in removed) == sorted(after)


@pytest.mark.parametrize("name", ["json.py", "yaml.py", "torch/__init__.py", "typing.py"])
def test_python_m_warns_of_a_shadow_in_the_current_folder(tmp_path: Path, name: str) -> None:
    marker = tmp_path / "imported"
    shadow = tmp_path / name
    shadow.parent.mkdir(exist_ok=True)
    shadow.write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    res = subprocess.run([sys.executable, "-m", "preflight", "rules", "list"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert res.returncode == 0, res.stderr[-2000:]
    shown = name.split("/")[0] + ("/" if "/" in name else "")
    assert "warning" in res.stderr and shown in res.stderr
    assert not marker.exists()


def test_every_child_is_started_through_the_one_helper() -> None:
    # One place decides how children start (issue 21 item 1): subprocess only in base/proc.py,
    # the interpreter's path only in base/isolate.py, so a new spawn site cannot forget the isolation.
    import ast

    spawn = {("subprocess", n) for n in ("Popen", "run", "call", "check_call", "check_output",
                                         "getoutput", "getstatusoutput")}
    spawn |= {("os", n) for n in ("system", "popen", "execv", "execve", "execvp", "execvpe",
                                  "execl", "execlp", "spawnv", "spawnve", "posix_spawn",
                                  "posix_spawnp", "fork", "forkpty")}
    found = []
    for path in sorted((REPO / "preflight").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                pair = (node.value.id, node.attr)
                if pair in spawn and rel != "preflight/base/proc.py":
                    found.append(f"{rel}:{node.lineno}: {'.'.join(pair)}")
                if pair == ("sys", "executable") and rel != "preflight/base/isolate.py":
                    found.append(f"{rel}:{node.lineno}: sys.executable")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any(n.split(".")[0] == "multiprocessing" for n in names):
                    found.append(f"{rel}:{node.lineno}: multiprocessing")
    assert found == []


def test_the_job_is_known_before_the_smoke_children_start(tmp_path: Path, monkeypatch) -> None:
    # The smoke children start before the static check reads the job (issue 26's prestart):
    # the job's folders must already be kept out of their PYTHONPATH then.
    from preflight import api, smoke

    monkeypatch.setattr(isolate, "_roots", {})
    seen: list[tuple[str, ...]] = []

    def prestart(*args: object, **kwargs: object) -> None:
        seen.append(isolate.job_roots())

    monkeypatch.setattr(smoke, "prestart", prestart)
    (tmp_path / "job").mkdir()
    api.check(paths=[str(tmp_path / "job")], smoke=False)
    assert seen == [(str(tmp_path / "job"),)]
