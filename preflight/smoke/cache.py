"""The bytecode cache of the smoke children: the one place fp8-doctor writes besides ``-o``.

Why: on an image whose packages hold no bytecode and that sets ``PYTHONDONTWRITEBYTECODE=1``
(an environment made by ``uv pip install`` without ``--compile-bytecode``, a read-only image),
every smoke child compiled torch, sympy and Transformer Engine from source again: 5.1 of the 11.5 s
of the TE import were ``builtins.compile`` on an H100 (issue 15, docs/gpu-results.md). With the
cache, children read ``-X pycache_prefix=DIR`` (``python -I`` ignores ``PYTHONPYCACHEPREFIX``).

Filling it (issue 26): *writing* bytecode is not free. Each ``.pyc`` is marshalled, written to a
temporary file and renamed into place (``SourceFileLoader.set_data`` / ``_write_atomic``), and a
prefix hides the standard library's own bytecode, so it is compiled and written too: ~0.7 ms of
CPU per file on the dev box (``benchmarks/pycache_cold.py``), ~2,500-5,000 files per child. On
the H200 the first run, three children filling an empty prefix at once, took 19.2 s where
``--no-cache`` took 12.7 s. So the children never fill it: while the cache is not complete they
run exactly as with ``--no-cache`` (the environment's own bytecode settings), and one more child,
the *filler*, at the lowest CPU priority and with no GPU visible, imports what they import into
DIR and writes the *marker* (``complete.json``, beside DIR) last. The filler is ended with the
smoke step: a killed filler leaves valid ``.pyc`` files (each one renamed into place whole) and
no marker, and the next run's filler goes on from there. Only with the marker, and only while
it matches the installed packages (origin, size and mtime of each module's ``__init__``), do the
children read DIR (:func:`launch`). They may still write there what the filler did not import
(a module a check imports later): a few files.

Where: ``--cache-dir DIR``, else ``$FP8_DOCTOR_CACHE_DIR``, else ``$XDG_CACHE_HOME/fp8-doctor``,
else ``~/.cache/fp8-doctor``; the bytecode goes to its ``pycache/`` folder. ``--no-cache`` or
``FP8_DOCTOR_NO_CACHE=1`` turn it off. It is used only when the children would compile from
source: where the installed torch (and the backends a child imports) already has its bytecode
beside the source, reading a prefix instead would only compile everything once more.

Trust: a bytecode file is code the children execute, so a poisoned cache is code execution. The
folders are created 0700, and the cache is refused (the children then run without it, said in
the smoke details) when the folder or its parent is a symbolic link, is not owned by this user,
or is writable by group or others (a parent writable by others must be sticky, as /tmp is), or
lies in a git work tree (a pull request could ship its files: :func:`_in_a_checkout`). The
marker is data that only chooses between these two policies; it is read without following a
link, from a regular file of at most :data:`MARKER_MAX_BYTES`.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from preflight.smoke.priority import lowest_priority

ENV_DIR = "FP8_DOCTOR_CACHE_DIR"
ENV_OFF = "FP8_DOCTOR_NO_CACHE"
MARKER = "complete.json"
"""The file, beside ``pycache/``, that a filler writes last: which modules it filled."""
MARKER_MAX_BYTES = 1 << 20
# What would stop a child from writing bytecode or point it elsewhere than -X pycache_prefix.
BYTECODE_ENV = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")

Fingerprint = dict[str, list[Any]]   # module -> [origin, size, mtime_ns] of its source


@dataclass(frozen=True)
class Fill:
    """What the filler child does on a cold cache: import ``imports`` with ``prefix`` as its
    bytecode prefix, then record ``key`` (the modules' fingerprints) in ``marker``."""

    prefix: str
    marker: str
    key: Fingerprint
    imports: tuple[str, ...] = ()

    def request(self) -> dict[str, Any]:
        return {"fill": {"marker": self.marker, "key": self.key, "imports": list(self.imports)}}


@dataclass(frozen=True)
class Cache:
    """``prefix``: the folder the smoke children read (``-X pycache_prefix``; None: they run
    without); ``status``: used (complete: they read it), filling (cold: a filler writes it),
    off, not needed or refused; ``reason``: why, for the smoke details; ``fill``: the filler's
    work while the cache is filling."""

    prefix: str | None
    status: str
    reason: str = ""
    fill: Fill | None = None

    def as_details(self) -> dict[str, str | None]:
        folder = self.prefix or (self.fill.prefix if self.fill else None)
        return {"status": self.status, "dir": folder, "reason": self.reason or None}

    def with_imports(self, imports: Sequence[str]) -> Cache:
        """The same cache, its filler importing ``imports`` (the children's own imports)."""
        if self.fill is None:
            return self
        return Cache(self.prefix, self.status, self.reason,
                     Fill(self.fill.prefix, self.fill.marker, self.fill.key, tuple(imports)))


@dataclass(frozen=True)
class Launch:
    """How a child's interpreter starts: extra flags, variables set and variables removed."""

    flags: tuple[str, ...] = ()
    set_env: Mapping[str, str] = field(default_factory=dict)
    drop_env: tuple[str, ...] = ()


def launch(cache: Cache | None, role: str) -> Launch:
    """The policy: ``role`` ``smoke`` (a child that runs checks) or ``filler``.

    - a complete cache (``used``): smoke children read and write the prefix;
    - a cold one (``filling``): smoke children run as with ``--no-cache``, untouched; the filler
      writes the prefix, at the lowest priority (it lowers its own), with no GPU visible (it only
      imports: no CUDA context may take a GPU in exclusive mode from a check);
    - off, not needed, refused (untrusted folder): no prefix for anyone, and no filler.
    """
    if role == "filler":
        if cache is None or cache.fill is None:
            raise ValueError("no filler: the cache is not being filled")
        return Launch(("-X", f"pycache_prefix={cache.fill.prefix}"),
                      {"CUDA_VISIBLE_DEVICES": ""}, BYTECODE_ENV)
    if role != "smoke":
        raise ValueError(f"unknown role {role!r}")
    if cache is not None and cache.status == "used" and cache.prefix:
        return Launch(("-X", f"pycache_prefix={cache.prefix}"), {}, BYTECODE_ENV)
    return Launch()


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


def _in_a_checkout(root: str) -> str | None:
    """Why ``root`` must not hold the cache because a commit could fill it, or None.

    Red team (issue 21): ``--cache-dir .cache/fp8-doctor`` (or ``XDG_CACHE_HOME``) inside a CI
    workspace, as one does to keep it with the CI's cache action, is a folder a pull request
    can ship files into, owned by the runner user and not writable by others, so it passed the
    owner and mode checks; a planted unchecked-hash ``.pyc`` (PEP 552: never compared with the
    source) for ``torch/__init__.py`` then ran in every smoke child."""
    from preflight.reading.boundary import checkout_holding

    top = checkout_holding(root)
    if top is None:
        return None
    return (f"{root} lies in the git work tree {top}: a commit (a pull request) could ship "
            "bytecode there, which the smoke children would run; keep the cache outside "
            "repositories (the default is ~/.cache/fp8-doctor)")


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


def _origins(modules: Sequence[str]) -> dict[str, str | None]:
    """Each installed module of ``modules`` -> its source file (None: nothing to compile)."""
    import importlib.util

    out: dict[str, str | None] = {}
    for name in modules:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is not None:
            out[name] = spec.origin if isinstance(spec.origin, str) else None
    return out


def needed(modules: Sequence[str]) -> str | None:
    """The first of ``modules`` (installed) whose bytecode is missing, or None."""
    return next((name for name, origin in _origins(modules).items()
                 if not has_bytecode(origin)), None)


def fingerprint(origins: Mapping[str, str | None]) -> Fingerprint:
    """What the marker records per module: a reinstalled package no longer matches it."""
    out: Fingerprint = {}
    for name, origin in sorted(origins.items()):
        try:
            st = os.stat(origin) if origin else None
        except OSError:
            st = None
        out[name] = [origin, st.st_size if st else 0, st.st_mtime_ns if st else 0]
    return out


def read_marker(path: str) -> dict[str, Any]:
    """The marker's content, or {} when it is absent, not a regular file, too large, a link, or
    not the JSON object a filler writes."""
    try:   # non-blocking: a FIFO there (no writer) blocked the smoke step forever (redteam15)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) |
                     getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return {}
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MARKER_MAX_BYTES:
            return {}
        with os.fdopen(fd, "rb", closefd=False) as fh:
            doc = json.loads(fh.read(MARKER_MAX_BYTES + 1))
    except (OSError, ValueError, RecursionError):
        return {}
    finally:
        os.close(fd)
    return doc if isinstance(doc, dict) else {}


def complete(marker: str, key: Fingerprint, tag: str | None = None) -> bool:
    """Whether a filler finished for every module of ``key``, as they are installed now."""
    filled = read_marker(marker).get("filled")
    mine = filled.get(tag or sys.implementation.cache_tag) if isinstance(filled, dict) else None
    return isinstance(mine, dict) and bool(key) and all(mine.get(k) == v for k, v in key.items())


def write_marker(marker: str, key: Fingerprint, tag: str, errors: Mapping[str, str]) -> None:
    """Record ``key`` as filled (merged with what other interpreters filled), atomically: a
    temporary file of our own renamed over the marker."""
    old = read_marker(marker).get("filled")
    filled: dict[str, Any] = old if isinstance(old, dict) else {}
    mine = filled.get(tag)
    filled[tag] = {**(mine if isinstance(mine, dict) else {}), **key}
    out = {"filled": filled, "errors": dict(errors)}
    tmp = f"{marker}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(out, fh)
        os.replace(tmp, marker)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def resolve(modules: Sequence[str], *, enabled: bool = True, folder: str | None = None,
            env: Mapping[str, str] | None = None) -> Cache:
    """The cache for children that import ``modules``: used (complete), filling (cold), off,
    not needed, or refused."""
    env = os.environ if env is None else env
    if not enabled or env.get(ENV_OFF, "").strip() not in ("", "0"):
        return Cache(None, "off", "--no-cache" if not enabled else f"{ENV_OFF} is set")
    origins = _origins(modules)
    missing = next((name for name, origin in origins.items() if not has_bytecode(origin)), None)
    if missing is None:
        return Cache(None, "not needed", "the installed packages have their bytecode")
    root = folder or default_dir(env)
    why = _in_a_checkout(root)
    why = why or _ensure(root)
    prefix = os.path.join(root, "pycache")
    if why is None:
        why = _ensure(prefix)
    if why:
        return Cache(None, "refused", f"bytecode cache not used: {why}")
    key = fingerprint(origins)
    marker = os.path.join(root, MARKER)
    if complete(marker, key):
        return Cache(prefix, "used", f"{missing} has no bytecode beside its source")
    return Cache(None, "filling",
                 f"{missing} has no bytecode beside its source; the cache is not complete for "
                 f"{', '.join(sorted(key))} yet: a low-priority child fills it while the "
                 "checks run without it", Fill(prefix, marker, key))


def fill(request: Mapping[str, Any]) -> dict[str, Any]:
    """The filler child's work (``child.py`` with a ``fill`` request; this process already runs
    with the prefix): lowest priority, import each module, then write the marker. An import that
    fails still ends the filling (what it imported is cached; the checks import the rest)."""
    import importlib
    import time

    lowered = lowest_priority()
    t0 = time.perf_counter()
    errors: dict[str, str] = {}
    for name in request.get("imports") or ():
        try:
            if str(name).startswith("transformer_engine"):
                from preflight.smoke.te_check import _without_te_jax

                with _without_te_jax():
                    importlib.import_module(name)
            else:
                importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 - recorded; the marker is still written
            if isinstance(exc, KeyboardInterrupt):
                raise
            errors[str(name)] = f"{type(exc).__name__}: {exc}"[:300]
    key = request.get("key")
    if isinstance(key, dict) and isinstance(request.get("marker"), str):
        write_marker(request["marker"], key, str(sys.implementation.cache_tag), errors)
    return {"seconds": round(time.perf_counter() - t0, 3), "errors": errors,
            "prefix": sys.pycache_prefix, "priority": lowered}
