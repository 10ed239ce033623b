"""The bytecode cache of the smoke children: the one place fp8-doctor writes besides ``-o``.

Why: on an image whose packages hold no bytecode and that sets ``PYTHONDONTWRITEBYTECODE=1``
(an environment made by ``uv pip install`` without ``--compile-bytecode``, a read-only image),
every smoke child compiled torch, sympy and Transformer Engine from source again: 5.1 of the 11.5 s
of the TE import were ``builtins.compile`` on an H100 (issue 15, docs/gpu-results.md). The
children get ``-X pycache_prefix=DIR`` instead (``python -I`` ignores ``PYTHONPYCACHEPREFIX``), so
the first run fills DIR and later runs read it.

Where: ``--cache-dir DIR``, else ``$FP8_DOCTOR_CACHE_DIR``, else ``$XDG_CACHE_HOME/fp8-doctor``,
else ``~/.cache/fp8-doctor``; the bytecode goes to its ``pycache/`` folder. ``--no-cache`` or
``FP8_DOCTOR_NO_CACHE=1`` turn it off. It is used only when the children would compile from
source: where the installed torch (and the backends a child imports) already has its bytecode
beside the source, reading a prefix instead would only compile everything once more.

Trust: a bytecode file is code the children execute, so a poisoned cache is code execution. The
folders are created 0700, and the cache is refused (the children then run without it, said in
the smoke details) when the folder or its parent is a symbolic link, is not owned by this user,
or is writable by group or others (a parent writable by others must be sticky, as /tmp is).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ENV_DIR = "FP8_DOCTOR_CACHE_DIR"
ENV_OFF = "FP8_DOCTOR_NO_CACHE"


@dataclass(frozen=True)
class Cache:
    """``prefix``: the folder to pass as ``pycache_prefix`` (None: no cache); ``status``: used,
    off, not needed or refused; ``reason``: why, for the smoke details."""

    prefix: str | None
    status: str
    reason: str = ""

    def as_details(self) -> dict[str, str | None]:
        return {"status": self.status, "dir": self.prefix, "reason": self.reason or None}


def default_dir(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    if env.get(ENV_DIR):
        return env[ENV_DIR]
    base = env.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):   # the XDG spec: a relative value is ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fp8-doctor")


def _unsafe(path: str, st: os.stat_result, *, parent: bool = False) -> str | None:
    """Why a folder cannot be trusted with code, or None."""
    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a folder"
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if uid is not None and st.st_uid != uid and not (parent and st.st_uid == 0):
        return f"{path} is owned by uid {st.st_uid}, not by this user ({uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        if parent and st.st_mode & stat.S_ISVTX:
            return None   # a sticky shared folder (/tmp): others cannot replace our folder
        return f"{path} is writable by its group or by others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _ensure(path: str) -> str | None:
    """Create ``path`` (0700) if missing and check it and its parent; the refusal or None."""
    parent = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(parent, mode=0o700, exist_ok=True)
        why = _unsafe(parent, os.lstat(parent), parent=True)
        if why:
            return why
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        return _unsafe(path, os.lstat(path))
    except OSError as exc:
        return f"cannot create {path}: {exc.strerror or exc}"


def has_bytecode(origin: str | None) -> bool:
    """Whether a module's source has its bytecode beside it (``__pycache__``), as an install
    that compiled it leaves it; looked at without importing anything."""
    if not origin or not origin.endswith(".py"):
        return True   # a namespace package, an extension module, or nothing to compile
    tag = sys.implementation.cache_tag
    if tag is None:
        return True
    folder, name = os.path.split(origin)
    return os.path.exists(os.path.join(folder, "__pycache__", f"{name[:-3]}.{tag}.pyc"))


def needed(modules: Sequence[str]) -> str | None:
    """The first of ``modules`` (installed) whose bytecode is missing, or None."""
    import importlib.util

    for name in modules:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is not None and not has_bytecode(spec.origin):
            return name
    return None


def resolve(modules: Sequence[str], *, enabled: bool = True, folder: str | None = None,
            env: Mapping[str, str] | None = None) -> Cache:
    """The cache for children that import ``modules``: used, off, not needed, or refused."""
    env = os.environ if env is None else env
    if not enabled or env.get(ENV_OFF, "").strip() not in ("", "0"):
        return Cache(None, "off", "--no-cache" if not enabled else f"{ENV_OFF} is set")
    missing = needed(modules)
    if missing is None:
        return Cache(None, "not needed", "the installed packages have their bytecode")
    root = folder or default_dir(env)
    why = _ensure(root)
    prefix = os.path.join(root, "pycache")
    if why is None:
        why = _ensure(prefix)
    if why:
        return Cache(None, "refused", f"bytecode cache not used: {why}")
    return Cache(prefix, "used", f"{missing} has no bytecode beside its source")
