"""Temporary folders fp8-doctor makes, recorded before they exist, so none outlives a run.

A folder (a child's private working folder, the smoke step's work folder) is added to the record
before ``mkdir``, so a signal at any point leaves it known: :func:`remove_all` (called by
``proc.kill_all`` when an entry point is interrupted or exits) removes whatever its maker could
not (issue 21 item 8: SIGTERM during the smoke step left its folder). The place is ``tempfile``'s
choice (its ``tempdir`` override, then TMPDIR, TEMP, TMP, /tmp, /var/tmp), but never the current
folder, where ``tempfile`` falls back to; each folder is 0700 and made fresh (``mkdir`` refuses
anything already there, a symbolic link included). Standard library only, nothing imported at
start-up beyond ``os``, ``sys`` and ``threading``.
"""

from __future__ import annotations

import os
import sys
import threading

_made: set[str] = set()
_lock = threading.Lock()


def temp_dir(prefix: str = "fp8-doctor-child-") -> str | None:
    """A new empty folder only this user can enter; None when none can be made."""
    chosen = getattr(sys.modules.get("tempfile"), "tempdir", None)   # tempfile's override
    for base in (chosen, os.environ.get("TMPDIR"), os.environ.get("TEMP"),
                 os.environ.get("TMP"), "/tmp", "/var/tmp"):
        if not base or not os.path.isabs(base):
            continue
        path = os.path.join(base, f"{prefix}{os.getpid()}-{os.urandom(6).hex()}")
        with _lock:
            _made.add(path)
        try:
            os.mkdir(path, 0o700)
        except OSError:
            with _lock:
                _made.discard(path)
            continue
        return path
    return None


def remove_dir(path: str) -> None:
    """Remove a folder made by :func:`temp_dir` with everything in it, and forget it."""
    if path:
        import shutil

        shutil.rmtree(path, ignore_errors=True)   # never follows a symlink left inside
        with _lock:
            _made.discard(path)


def remove_all() -> None:
    """Remove every folder made here and not removed yet."""
    with _lock:
        left = list(_made)
    for path in left:
        remove_dir(path)
