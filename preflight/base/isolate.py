"""How every Python child of fp8-doctor starts: nothing importable from the job or the cwd.

Issue 21 item 1: a job folder (or the caller's current folder) holding ``json.py``, ``yaml.py``, a
``torch/`` or a ``preflight/`` package was imported by ``check --deep``, ``smoke``, ``speedup``
and the cluster mode, because their children started Python with the working directory on
``sys.path`` (``python -c`` puts ``''`` first, ``python -m`` the cwd). Users point fp8-doctor at
repositories they did not write, so that is code from a stranger running on their machine.

Every Python child is started through this module and :func:`preflight.base.proc.start`:

- its working directory is a private, empty temporary folder (``proc.start`` makes one for every
  child and removes it with everything in it once the child is collected or killed), so what
  Python puts first on ``sys.path`` (the cwd for ``-m``, ``''`` for ``-c``) holds nothing;
- ``-P`` (Python 3.11+, the interpreter running fp8-doctor) keeps even that folder off
  ``sys.path``. ``-I`` is not used: it also drops ``PYTHONPATH`` and the user's site-packages,
  where the FP8 stack often lives (Transformer Engine on ``PYTHONPATH`` on GPU machines, module
  systems on clusters, ``pip install --user``); without them the smoke step would say "TE not
  installed" about a machine where the job finds it;
- ``PYTHONPATH`` is cleaned (:func:`split_pythonpath`): dropped are empty entries and ``.``
  (Python reads them as the cwd), relative ones, the current folder itself, the folder of a
  config file named on the command line, and a folder named on the command line or anything
  inside it; each is said once on stderr by the entry points (:data:`notice`). Kept is every
  other absolute entry, in its order: that is the user's own environment, the one the job will
  run with (Transformer Engine on ``PYTHONPATH=/tmp/site`` on GPU machines, module systems on
  clusters), and a smoke step that cannot see it would say "TE not installed" falsely. So an
  entry the user pointed *into* the current folder (``PYTHONPATH=$PWD/src``) is kept unless that
  folder was named as the job;
- fp8-doctor's own package stays importable: when the child would not find it in site-packages
  (a source checkout used through ``PYTHONPATH`` or run from its folder), its folder is put
  first on the child's ``PYTHONPATH`` -- it is the code already running in the parent.

The job roots come from :func:`add_job_roots` (``api.collect_facts`` calls it with the paths of a
check); the entry points (:mod:`preflight._startup`) also prune this process's own ``sys.path``
with :func:`prune_sys_path`, first thing, and again as job roots become known. Everything here is the standard library and costs microseconds: the
static check pays nothing for it (benchmarks/bench_check.py).
"""

# Only os and sys (loaded with the interpreter) at import, and no ``from __future__`` (a real
# import of a module named __future__): the entry points import this module before the current
# folder is off sys.path (preflight/_startup.py), so it must not import anything a folder could
# shadow. Annotations are quoted; typing is read by type checkers only (mypy honours any name
# TYPE_CHECKING).
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

SAFE_PATH_FLAG = "-P" if sys.version_info >= (3, 11) else ""
"""Python's flag that keeps the script's folder / the cwd off ``sys.path`` ('' before 3.11)."""
MAX_JOB_ROOTS = 256
"""Job roots remembered by one process (a long-lived library user checks many jobs)."""

_roots: dict[str, bool] = {}     # real path -> a folder given (else a given file's folder)
_prune_self = False              # True in our own entry points: sys.path is pruned as well
notice: "Callable[[str], None] | None" = None
"""Where a dropped PYTHONPATH entry is reported (the entry points set it to stderr; a library
user's process hears nothing)."""
_noticed: "set[str]" = set()


def add_job_roots(paths: "Iterable[str]") -> None:
    """Remember the job roots of a check: each folder given (nothing inside it reaches a child),
    and the folder of each file given (that folder itself does not; a file named in ``~`` or
    ``/tmp`` does not make everything under it the job).

    Roots are only ever added (concurrent checks in one process each keep theirs; the oldest are
    forgotten past :data:`MAX_JOB_ROOTS`). In fp8-doctor's own entry points this process's
    ``sys.path`` is pruned of them too (:func:`prune_sys_path`).
    """
    for path in paths:
        try:
            real = os.path.realpath(os.fspath(path))
        except (OSError, TypeError, ValueError):
            continue
        folder = os.path.isdir(real)
        root = real if folder else os.path.dirname(real)
        before = _roots.pop(root, False)   # re-inserted last: the newest are kept
        _roots[root] = folder or before
    while len(_roots) > MAX_JOB_ROOTS:
        del _roots[next(iter(_roots))]
    if _prune_self:
        prune_sys_path()


def job_roots() -> "tuple[str, ...]":
    """The job folders: a PYTHONPATH entry inside one is never given to a child."""
    return tuple(root for root, folder in _roots.items() if folder)


def _file_folders() -> "tuple[str, ...]":
    return tuple(root for root, folder in _roots.items() if not folder)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def _cwd() -> "str | None":
    try:
        return os.path.realpath(os.getcwd())
    except OSError:  # the current folder was removed
        return None


def unsafe_entry(entry: str, *, cwd: "str | None", roots: "Sequence[str]",
                 exact: "Sequence[str]" = ()) -> "str | None":
    """Why a module path entry must not reach a child (None: it may).

    ``roots``: job folders (the entry must not be one or inside one); ``exact``: folders the
    entry must not be (the current folder, the folder of a config file given).
    """
    if not entry or entry == ".":
        return "the current folder"
    if "\0" in entry:
        return "not a path"
    if not os.path.isabs(entry):
        return "a relative path (read against the current folder)"
    real = _real(entry)
    if cwd is not None and real == cwd:
        return "the current folder"
    if real in exact:
        return "the folder of a job file"
    for root in roots:
        if _inside(real, root):
            return f"the job folder {root}" if real == root else f"inside the job folder {root}"
    return None


def split_pythonpath(raw: "str | None", *, cwd: "str | None" = None,
                     roots: "Sequence[str] | None" = None) -> "tuple[list[str], list[str]]":
    """``PYTHONPATH`` -> (entries kept, entries dropped), both in their order."""
    if not raw:
        return [], []
    cwd = _cwd() if cwd is None else cwd
    exact = _file_folders() if roots is None else ()
    roots = job_roots() if roots is None else roots
    kept: list[str] = []
    dropped: list[str] = []
    for entry in raw.split(os.pathsep):
        unsafe = unsafe_entry(entry, cwd=cwd, roots=roots, exact=exact)
        (dropped if unsafe else kept).append(entry)
    return kept, dropped


def _tell(dropped: "list[str]") -> None:
    """Say once per entry that a PYTHONPATH entry a child would have used is left out: the smoke
    step or the import probe may then miss a package that lives there, and must not be believed
    silently. ``''`` and ``.`` (a stray separator, ``PYTHONPATH=$PYTHONPATH:/x``) go unsaid."""
    if notice is None:
        return
    cwd, roots, exact = _cwd(), job_roots(), _file_folders()
    for entry in dropped:
        if entry in ("", ".") or entry in _noticed:
            continue
        _noticed.add(entry)
        why = unsafe_entry(entry, cwd=cwd, roots=roots, exact=exact)
        notice(f"fp8-doctor: note: PYTHONPATH entry {entry} is not given to fp8-doctor's child "
               f"processes ({why}): it never imports code from the job or the current folder")


LOADER_VARS = ("LD_LIBRARY_PATH", "LD_PRELOAD", "LD_AUDIT")
"""The dynamic loader's variables that name libraries or their folders: a child loads what they
point at before any of its own code runs (``libcuda.so.1`` for the smoke child's driver thread
and torch, ``libnvidia-ml.so.1`` for NVML, ``nvidia-smi``'s)."""


FOLDER_VARS = ("CUDA_HOME", "CUDA_PATH", "CUDNN_HOME", "CUDNN_PATH", "NVRTC_HOME", "NVRTC_PATH",
               "CURAND_HOME", "CURAND_PATH")
"""Folders Transformer Engine searches for a library it then loads (``glob(f"{path}/**/lib{name}.so*")``
and ``ctypes.CDLL``: ``_load_cuda_library_from_system``, transformer_engine/common/__init__.py
l.303-334 at v2.18; ``_load_nvrtc`` reads ``CUDA_HOME`` at v2.9): one inside the job is left out
as a loader entry is, and TE falls back to ``/usr/local/cuda``."""


def loader_env(env: "Mapping[str, str]") -> "dict[str, str] | None":
    """``env`` with the loader's entries (and :data:`FOLDER_VARS`) that point into the job or
    the current folder left out (None: nothing to leave out).

    As for PYTHONPATH (redteam4, issue 21): a ``libcuda.so.1`` on ``LD_LIBRARY_PATH=$PWD/lib``
    inside the job ran its constructor in the smoke child (``cudawarm`` loads the driver by
    name, as torch does). A folder entry is judged as a PYTHONPATH entry is (an empty one is the
    child's cwd, glibc splits on ``:`` and ``;``); a file entry of ``LD_PRELOAD`` / ``LD_AUDIT``
    (split on ``:`` and blanks) by its folder, a bare name (``libjemalloc.so.2``, found in the
    system folders) is kept."""
    cwd, roots, exact = _cwd(), job_roots(), _file_folders()
    out: "dict[str, str] | None" = None
    for name in FOLDER_VARS:
        raw = env.get(name)
        why = unsafe_entry(raw, cwd=cwd, roots=roots, exact=exact) if raw else None
        if raw and why is not None:
            out = dict(env) if out is None else out
            out.pop(name, None)
            if raw not in _noticed and notice is not None:
                _noticed.add(raw)
                notice(f"fp8-doctor: note: {name}={raw} is not given to fp8-doctor's child "
                       f"processes ({why}): they never load a library from the job or the "
                       "current folder")
    for name in LOADER_VARS:
        raw = env.get(name)
        if not raw:
            continue
        kept: "list[str]" = []
        for entry in raw.replace(";", ":").split(":") if name == "LD_LIBRARY_PATH" else \
                raw.replace(":", " ").split():
            folder = entry if name == "LD_LIBRARY_PATH" else \
                os.path.dirname(entry) if "/" in entry else None
            why = None if folder is None else \
                unsafe_entry(folder or ".", cwd=cwd, roots=roots, exact=exact)
            if why is None:
                kept.append(entry)
            elif entry and entry not in _noticed and notice is not None:
                _noticed.add(entry)
                notice(f"fp8-doctor: note: {name} entry {entry} is not given to fp8-doctor's "
                       f"child processes ({why}): they never load a library from the job or "
                       "the current folder")
        joined = (":" if name == "LD_LIBRARY_PATH" else " ").join(kept)
        if joined != raw:
            out = dict(env) if out is None else out
            if joined:
                out[name] = joined
            else:
                out.pop(name, None)
    return out


def package_root() -> str:
    """The folder holding the ``preflight`` package this process runs."""
    import preflight

    return _real(os.path.dirname(os.path.dirname(os.path.abspath(preflight.__file__))))


def _found_without_pythonpath(root: str) -> bool:
    """Whether a child finds ``root`` on ``sys.path`` with no PYTHONPATH: site-packages, or a
    ``.pth`` file (an editable install), not this process's script folder or cwd."""
    not_site = {_real(p) for p in (os.environ.get("PYTHONPATH") or "").split(os.pathsep) if p}
    cwd = _cwd()
    if cwd:
        not_site.add(cwd)
    if sys.argv and sys.argv[0] not in ("", "-c", "-m"):
        not_site.add(_real(os.path.dirname(os.path.abspath(sys.argv[0]))))
    return any(p and _real(p) == root and _real(p) not in not_site for p in sys.path)


def python_argv(*args: str, executable: "str | None" = None) -> "list[str]":
    """argv of a Python child: this interpreter (or ``executable``), ``-P`` where it exists.

    ``-P`` is added only for this interpreter, whose version is known; another executable gets
    the private working folder and the cleaned environment only.
    """
    exe = executable or sys.executable or "python"
    flags = [SAFE_PATH_FLAG] if SAFE_PATH_FLAG and exe == sys.executable else []
    return [exe, *flags, *args]


def python_env(base: "Mapping[str, str] | None" = None, *,
               extra: "Mapping[str, str] | None" = None) -> "dict[str, str]":
    """The environment of a Python child: ``base`` (default: this process's) updated with
    ``extra``, its ``PYTHONPATH`` cleaned, fp8-doctor's own package reachable."""
    env = dict(os.environ if base is None else base)
    env.update(extra or {})
    kept, dropped = split_pythonpath(env.get("PYTHONPATH"))
    _tell(dropped)
    root = package_root()
    if root not in (_real(p) for p in kept) and not _found_without_pythonpath(root):
        kept.insert(0, root)
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        env.pop("PYTHONPATH", None)
    return env


def prune_sys_path() -> "list[str]":
    """Remove from this process's ``sys.path`` what a child would not get, and move what
    ``PYTHONPATH`` added behind site-packages; returns the entries removed. Only fp8-doctor's
    own entry points call it (never a library user's process).

    Candidates are the entries Python added from the command line (``''`` for ``-c``, the cwd for
    ``-m``) and from ``PYTHONPATH`` (which Python made absolute against the cwd at start-up);
    site-packages, the standard library and ``.pth`` entries are never touched, even inside a
    job root (a project's own ``.venv``). ``preflight`` itself is already imported and its
    submodules are found through its ``__path__``, so nothing of ours is lost.
    """
    global _prune_self
    first_call, _prune_self = not _prune_self, True
    cwd, roots, exact = _cwd(), job_roots(), _file_folders()
    raw = os.environ.get("PYTHONPATH") or ""
    from_env: "dict[str, list[str]]" = {}   # as sys.path shows it -> as PYTHONPATH gave it
    for given in raw.split(os.pathsep) if raw else ():
        if "\0" not in given:
            from_env.setdefault(os.path.abspath(given), []).append(given)

    def unsafe(i: int, entry: str) -> bool:
        if not entry or not os.path.isabs(entry):
            return True
        if i == 0 and first_call and cwd is not None and _real(entry) == cwd:
            return True   # python -m: the cwd, put there before any code of ours ran
        return any(unsafe_entry(given, cwd=cwd, roots=roots, exact=exact) is not None
                   for given in from_env.get(entry, ()))

    removed = [p for i, p in enumerate(sys.path) if isinstance(p, str) and unsafe(i, p)]
    kept = [p for p in sys.path if p not in removed]
    # What PYTHONPATH adds goes after the standard library and site-packages: this process
    # needs nothing from it (``preflight`` is imported already), and a folder inside a job not
    # yet known (the command line is parsed later) can then shadow neither ``json`` nor ``yaml``.
    sys.path[:] = [p for p in kept if p not in from_env] + [p for p in kept if p in from_env]
    return removed
