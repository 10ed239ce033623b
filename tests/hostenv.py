"""What the machine running the tests allows, asked of the machine itself, not assumed.

CI runs the suite in a container that differs from a developer's box: another user (or root
without the capabilities root usually has), a /tmp mounted ``noexec``, no C compiler, no ``git``.
A test that needs one of these asks here and skips with a reason naming the condition, so it
still proves what it proves wherever the condition holds. Each answer comes from trying (or from
the mount's flags), never from the user id alone: root in a user namespace cannot ``chown`` to an
unmapped id, and a user with ``CAP_DAC_OVERRIDE`` reads mode-000 files.
"""

from __future__ import annotations

import os
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest


def exec_allowed(folder: Path | str) -> bool:
    """Whether programs written under ``folder`` may run (False on a ``noexec`` mount)."""
    flag = getattr(os, "ST_NOEXEC", 0)
    try:
        return not (flag and os.statvfs(folder).f_flag & flag)
    except OSError:
        return True     # cannot tell: let the test run and say what went wrong


def require_exec(folder: Path | str) -> None:
    """Skip the calling test where a program written under ``folder`` cannot be run."""
    if not exec_allowed(folder):
        pytest.skip(f"{folder} is on a noexec mount: a program written there cannot be run")


@lru_cache(maxsize=1)
def _probe_dir() -> str:
    # Beside the tests' own temporary files (TMPDIR), never inside a test's tmp_path, whose
    # listing some tests compare; removed at once by each probe.
    return tempfile.gettempdir()


@lru_cache(maxsize=1)
def reads_mode_000() -> bool:
    """Whether this process reads a file whose mode is 000 (root with CAP_DAC_OVERRIDE)."""
    if os.name != "posix":
        return True
    fd, name = tempfile.mkstemp(dir=_probe_dir())
    try:
        os.write(fd, b"x")
        os.close(fd)
        os.chmod(name, 0)
        try:
            with open(name, "rb") as fh:
                fh.read(1)
        except PermissionError:
            return False
        return True
    finally:
        os.unlink(name)


@lru_cache(maxsize=1)
def writes_into_mode_500_folders() -> bool:
    """Whether this process creates files in a folder of mode 500 (root ignores folder modes)."""
    if os.name != "posix":
        return True
    folder = tempfile.mkdtemp(dir=_probe_dir())
    try:
        os.chmod(folder, 0o500)
        try:
            with open(os.path.join(folder, "f"), "wb"):
                pass
        except PermissionError:
            return False
        os.unlink(os.path.join(folder, "f"))
        return True
    finally:
        os.chmod(folder, 0o700)
        os.rmdir(folder)


@lru_cache(maxsize=8)
def can_chown_to(uid: int, gid: int) -> bool:
    """Whether this process can give a file to ``uid``:``gid`` (root, with that id mapped)."""
    if not hasattr(os, "chown"):
        return False
    fd, name = tempfile.mkstemp(dir=_probe_dir())
    os.close(fd)
    try:
        os.chown(name, uid, gid)
    except (OSError, ValueError):   # EPERM: not root; EINVAL: an id not mapped in this namespace
        return False
    finally:
        os.unlink(name)
    return True
