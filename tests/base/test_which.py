"""base.which finds what shutil.which finds, on real folders and files."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from preflight.base.which import which


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    for folder in ("a", "b", "c", "d"):
        (tmp_path / folder).mkdir()
    (tmp_path / "a" / "tool").write_text("#!/bin/sh\n")                 # not executable
    (tmp_path / "b" / "tool").mkdir()                                    # a folder
    exe = tmp_path / "c" / "tool"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "d" / "tool").symlink_to(exe)                            # a link to it
    (tmp_path / "d" / "dangling").symlink_to(tmp_path / "nowhere")
    return tmp_path


@pytest.mark.parametrize("order", ["a:b:c:d", "d:c", "a:a:b", "", ":c", "c::d", "nowhere:c",
                                   "a", "b:d"])
@pytest.mark.parametrize("cmd", ["tool", "dangling", "missing"])
def test_same_answer_as_shutil(tree: Path, order: str, cmd: str,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree / "c")       # an empty PATH entry is the current folder, for both
    path = os.pathsep.join(str(tree / p) if p else "" for p in order.split(":"))
    assert which(cmd, path=path) == shutil.which(cmd, path=path)


def test_a_command_with_a_folder_and_the_environment(tree: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for cmd in (str(tree / "c" / "tool"), str(tree / "a" / "tool"), str(tree / "b" / "tool"),
                "./tool"):
        assert which(cmd) == shutil.which(cmd)
    monkeypatch.setenv("PATH", f"{tree / 'a'}{os.pathsep}{tree / 'd'}")
    assert which("tool") == shutil.which("tool") == str(tree / "d" / "tool")
    monkeypatch.delenv("PATH")
    assert which("sh") == shutil.which("sh")
