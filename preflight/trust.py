"""Whose configuration fp8-doctor takes: ``[tool.fp8-doctor]`` and baselines (issue 21 item 4).

Both change the verdict (``fail-on = "never"``, ``ignore``, accepted findings), and the
``pyproject.toml`` is found by walking up from the job: another user's ``/tmp/pyproject.toml``
decided the result of a check of ``/tmp/job``. As git does for ``safe.directory``
(git-config(1), "safe.directory": a repository owned by someone else is refused), such a file is
used only when it is owned by the current user or root and nobody else can change it: the file is
writable neither by every user nor by a group other than the user's own, and its folder is
neither and is owned by the user or root, unless that folder has the sticky bit and is owned
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


def _own_groups(uid: int | None) -> set[int]:
    """The groups whose members are only this user (or root): the user's primary group, where
    distributions give each user a group of their own (umask 002 then makes files group-writable),
    and root's group."""
    if uid is None:
        return {os.getgid(), os.getegid(), 0}
    try:
        import pwd

        return {pwd.getpwuid(uid).pw_gid, 0}
    except (ImportError, KeyError):
        return {0}


def _writable_by_others(st: os.stat_result, trusted: tuple[int, int], groups: set[int]) -> str:
    """Who besides the user and root can change what ``st`` describes ("" when no one)."""
    if st.st_mode & stat.S_IWOTH:
        return "every user"
    if st.st_mode & stat.S_IWGRP and st.st_gid not in groups:
        return f"the users of group {_group(st.st_gid)}"
    if st.st_uid not in trusted:
        return f"its owner {_owner(st.st_uid)}"
    return ""


def _group(gid: int) -> str:
    try:
        import grp

        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except (ImportError, KeyError):
        return f"gid {gid}"


def untrusted(path: str, *, uid: int | None = None) -> str | None:
    """Why ``path`` must not be used as configuration, or None when it may.

    No one but the user and root may be able to change it: its owner is the user or root; it is
    not writable by every user, nor by a group other than the user's own (red team: a
    ``pyproject.toml`` writable by a shared group, or lying in a folder another user owns, who
    can replace it, decided the result); its folder is neither (unless sticky and the user's or
    root's, as ``/tmp``). ``uid``: whose run this is (the current user's by default)."""
    if not hasattr(os, "getuid"):
        return None
    me = os.getuid() if uid is None else uid
    trusted = (me, 0)
    groups = _own_groups(uid)
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None                      # the reader reports a file it cannot read
    if not stat.S_ISREG(st.st_mode):
        return None                      # a FIFO, a device, a folder: the reader refuses it
    if st.st_uid not in trusted:
        return f"it is owned by {_owner(st.st_uid)}, not by you or root"
    who = _writable_by_others(st, trusted, groups)
    if who:
        return ("every user can write to it (world-writable)" if who == "every user" else
                f"{who} can write to it")
    for folder in dict.fromkeys((os.path.dirname(os.path.abspath(path)),
                                 os.path.dirname(os.path.realpath(path)))):
        try:
            fst = os.stat(folder)
        except OSError:
            continue
        who = _writable_by_others(fst, trusted, groups)
        if who and not (fst.st_mode & stat.S_ISVTX and fst.st_uid in trusted):
            return (f"its folder {folder} is writable by {who}, so anyone could have put "
                    "it there" if who == "every user" else
                    f"its folder {folder} can be changed by {who}, who could replace it")
    return None


def skipped(path: str, why: str, what: str) -> ConfigProblem:
    """The warning for a configuration file not used: ``what`` is what it would have set."""
    return ConfigProblem(
        path, None, f"not used as {what}: {why}; the check ran without it", level="warning",
        code="untrusted",
        fix=(f"If this file is yours, fix its owner or permissions (chmod o-w {path}); "
             "fp8-doctor, like git's safe.directory, takes configuration only from files you "
             "or root own that no other user can change."))
