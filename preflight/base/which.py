"""``shutil.which`` for POSIX, without importing ``shutil``.

``shutil`` imports bz2, lzma and fnmatch (~2-3 ms); the GPU probe looks for ``nvidia-smi`` on
every check of a machine without NVML (issue 26 item 4: the static check is held to 8% of
``collect_env``). The search is CPython 3.11's (Lib/shutil.py ``which`` on POSIX): each folder of
PATH (``os.defpath`` when PATH is unset; the current folder only where PATH names it), once, the
first regular-or-linked file that is executable by this user.
"""

from __future__ import annotations

import os


def which(cmd: str, path: str | None = None) -> str | None:
    """The path of ``cmd`` as ``shutil.which(cmd, path=path)`` finds it on POSIX, else None."""
    if os.path.dirname(cmd):
        return cmd if _runnable(cmd) else None
    if path is None:
        path = os.environ.get("PATH", None)
        if path is None:
            try:
                path = os.confstr("CS_PATH")
            except (AttributeError, ValueError):
                path = os.defpath
    if not path:
        return None
    seen: set[str] = set()
    for folder in path.split(os.pathsep):
        if folder in seen:
            continue
        seen.add(folder)
        name = os.path.join(folder, cmd)
        if _runnable(name):
            return name
    return None


def _runnable(fn: str) -> bool:
    return os.path.exists(fn) and os.access(fn, os.F_OK | os.X_OK) and not os.path.isdir(fn)
