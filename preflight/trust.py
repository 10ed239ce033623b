"""Whose configuration fp8-doctor takes: ``[tool.fp8-doctor]`` and baselines (issue 21 item 4).

Both change the verdict (``fail-on = "never"``, ``ignore``, accepted findings), and the
``pyproject.toml`` is found by walking up from the job: another user's ``/tmp/pyproject.toml``
decided the result of a check of ``/tmp/job``. As git does for ``safe.directory``
(git-config(1), "safe.directory": a repository owned by someone else is refused), such a file is
used only when it is owned by the current user or root and nobody else can write it: the file is
not world-writable, and neither is its folder unless that folder has the sticky bit and is owned
by the user or root (``/tmp`` itself is fine for one's own file; a world-writable folder of
another user's is not). A file that fails is skipped, never an error: the check runs without it
and the report says so (:func:`skipped`, a warning naming the file and why).

Where there are no user ids (Windows) nothing is refused.
"""

from __future__ import annotations

import os
import stat

from preflight.reading.types import ConfigProblem


def _owner(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def untrusted(path: str, *, uid: int | None = None) -> str | None:
    """Why ``path`` must not be used as configuration, or None when it may.

    ``uid``: whose run this is (the current user's by default)."""
    if not hasattr(os, "getuid"):
        return None
    me = os.getuid() if uid is None else uid
    trusted = (me, 0)
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None                      # the reader reports a file it cannot read
    if not stat.S_ISREG(st.st_mode):
        return None                      # a FIFO, a device, a folder: the reader refuses it
    if st.st_uid not in trusted:
        return f"it is owned by {_owner(st.st_uid)}, not by you or root"
    if st.st_mode & stat.S_IWOTH:
        return "every user can write to it (world-writable)"
    for folder in dict.fromkeys((os.path.dirname(os.path.abspath(path)),
                                 os.path.dirname(os.path.realpath(path)))):
        try:
            fst = os.stat(folder)
        except OSError:
            continue
        if fst.st_mode & stat.S_IWOTH and not (fst.st_mode & stat.S_ISVTX
                                               and fst.st_uid in trusted):
            return (f"its folder {folder} is writable by every user, so anyone could have put "
                    "it there")
    return None


def skipped(path: str, why: str, what: str) -> ConfigProblem:
    """The warning for a configuration file not used: ``what`` is what it would have set."""
    return ConfigProblem(
        path, None, f"not used as {what}: {why}; the check ran without it", level="warning",
        code="untrusted",
        fix=(f"If this file is yours, fix its owner or permissions (chmod o-w {path}); "
             "fp8-doctor, like git's safe.directory, takes configuration only from files you "
             "or root own that no other user can change."))
