"""The read boundary: which files one run may read of the job (issue 21 item 2).

fp8-doctor is run on repositories its user did not write (a pull request in CI, a cloned recipe).
A launch script that ``source``\\s ``~/.bashrc``, ``/etc/environment`` or ``../../../x``, a YAML
whose ``deepspeed_config_file`` is ``../../.ssh/config.json``, or a symlink in the job folder to
``/etc/shadow`` used to get those files' contents into every output. Now a run reads only:

- every path named on the command line (a file named is inside, even a symlink to elsewhere:
  the user named it; a folder named is a job root);
- files under a *job root*, by real path (symlinks resolved): a folder given; the folder of a
  file given; the top of the git work tree holding a path given (the nearest folder above it
  with a ``.git`` entry: a recipe repository's configs name each other from its top, as
  LLaMA-Factory's ``examples/train_full/llama3_full_sft.yaml`` names
  ``examples/deepspeed/ds_z3_config.json``); and, outside a git work tree, the current
  directory when it holds a path given at most :data:`CWD_MAX_LEVELS` folders down (people
  launch from the repository's top). A root that is not a folder given must not be
  a place no single job owns: the filesystem root, the home directory or a folder above it, or a
  world-writable folder (``/tmp``); there only the named file itself is inside;
- the documented machine probes and fp8-doctor's own configuration (``[tool.fp8-doctor]``, a
  baseline, rule packs, a snapshot: named by the user, see docs/reliability.md), which are not
  job files and do not pass through here.

:func:`enforced` sets the boundary for one :func:`preflight.jobs.read.read_paths` call (a context
variable: concurrent checks in threads each have their own); :func:`refuse` is what
``jobs.parse.read_text`` calls before opening a job file, and :func:`outside_reference` what the
``source`` follower and the reference resolver call to turn a reference that leaves the job into
a warning naming the file and line that makes it ("... outside the job: not read"), never a read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from preflight.reading.types import ConfigProblem

_MAX_WALK_UP = 64      # folders looked at above a path for a .git entry


@dataclass(frozen=True)
class Boundary:
    """The files a run may read: those named, and what lies under a job root (real paths)."""

    named: frozenset[str]
    roots: tuple[str, ...]
    refused: list[ConfigProblem] = field(default_factory=list, compare=False)

    def allows(self, path: str) -> bool:
        """Whether ``path`` (symlinks resolved) is named or lies under a job root."""
        real = _real(path)
        if real in self.named:
            return True
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep)
                   for root in self.roots)

    def where(self) -> str:
        """The job roots, for messages."""
        return ", ".join(self.roots) if self.roots else "only the files named"


_CURRENT: ContextVar[Boundary | None] = ContextVar("fp8_doctor_read_boundary", default=None)


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(os.fspath(path)))


def _is_shared(folder: str) -> bool:
    """A folder no single job owns: ``/``, the home directory or above it, world-writable."""
    home = _real(os.path.expanduser("~"))
    if folder == os.sep or folder == home or home.startswith(folder.rstrip(os.sep) + os.sep):
        return True
    try:
        return bool(os.stat(folder).st_mode & stat.S_IWOTH)
    except OSError:
        return True


def _git_top(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` with a ``.git`` entry, or None."""
    for _ in range(_MAX_WALK_UP):
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def checkout_holding(path: str) -> str | None:
    """The top of the git work tree holding ``path`` (symlinks resolved), or None; a ``.git``
    in the home directory or above (a dotfiles repository) does not count. What lies there
    is what a commit - a pull request checked out in CI - ships."""
    top = _git_top(_real(path))
    return None if top is None or _is_shared(top) else top


CWD_MAX_LEVELS = 4
"""Without a git work tree, the current directory is a job root only when the job lies at most
this many folders below it (LLaMA-Factory's YAMLs are 3 below the top): run from ``~/src``,
a job in ``~/src/repo/job`` must not open every other repository under ``~/src``."""


def _levels_below(folder: str, top: str) -> int | None:
    """How many folders ``folder`` lies below ``top`` (0: the same), None when not below."""
    if folder == top:
        return 0
    prefix = top.rstrip(os.sep) + os.sep
    return folder[len(prefix):].count(os.sep) + 1 if folder.startswith(prefix) else None


def boundary_for(paths: Sequence[str], cwd: str | None = None) -> Boundary:
    """The boundary of a run given ``paths`` (see the module docstring)."""
    here = _real(cwd or os.getcwd())
    named: set[str] = set()
    roots: list[str] = []
    for raw in paths:
        path = os.fspath(raw)
        real = _real(path)
        if os.path.isdir(path):
            roots.append(real)            # a folder given: the user's own choice
            base = real
        else:
            named.add(real)
            base = _real(os.path.dirname(os.path.abspath(path)))
            roots.append(base)
        top = _git_top(base)
        below = _levels_below(base, here)
        if top is not None:
            roots.append(top)
        elif below is not None and below <= CWD_MAX_LEVELS:
            roots.append(here)
    kept = [r for i, r in enumerate(roots) if r not in roots[:i]]
    given_folders = {_real(p) for p in paths if os.path.isdir(p)}
    return Boundary(frozenset(named),
                    tuple(r for r in kept if r in given_folders or not _is_shared(r)))


@contextmanager
def enforced(paths: Sequence[str]) -> Iterator[Boundary]:
    """Make the boundary of ``paths`` the current one while the job is read."""
    boundary = boundary_for(paths)
    token = _CURRENT.set(boundary)
    try:
        yield boundary
    finally:
        _CURRENT.reset(token)


def current() -> Boundary | None:
    """The boundary in force (None outside :func:`enforced`: nothing is restricted)."""
    return _CURRENT.get()


def refuse(path: str) -> str | None:
    """Why ``path`` may not be read under the current boundary, or None when it may."""
    boundary = current()
    if boundary is None or boundary.allows(path):
        return None
    real = _real(path)
    link = f"a symbolic link to {real}, " if real != os.path.abspath(path) else ""
    return (f"{link}a file outside the job (job root: {boundary.where()}): not read; "
            "fp8-doctor reads only the files named and what they reference inside the job")


def outside_problem(target: str, naming_file: str, line: int | None, what: str,
                    ) -> ConfigProblem | None:
    """The warning for the file and line that reference ``target`` (an existing file) when it
    lies outside the current boundary, else None."""
    boundary = current()
    if boundary is None or boundary.allows(target):
        return None
    return ConfigProblem(
        naming_file, line,
        f"{what} {target!r}, a file outside the job (job root: {boundary.where()}): not read",
        level="warning", code="outside_job",
        fix=("fp8-doctor reads only the files named and what they reference inside the job. If "
             "that file belongs to the job, name it too (fp8-doctor check "
             f"{os.path.basename(naming_file)} {target}), or run fp8-doctor from the top of "
             "the repository holding both (its git work tree, or the current directory at "
             f"most {CWD_MAX_LEVELS} folders above the file named); otherwise nothing in it "
             "is checked."))


def outside_reference(target: str, naming_file: str, line: int | None, what: str) -> bool:
    """:func:`outside_problem`, recorded for the job reader (``Boundary.refused``); True when
    ``target`` is outside: the caller must not read it."""
    problem = outside_problem(target, naming_file, line, what)
    boundary = current()
    if problem is None or boundary is None:
        return False
    if problem not in boundary.refused:
        boundary.refused.append(problem)
    return True


def above(start: str, relative: str, is_dir: bool, max_up: int) -> str | None:
    """The folder at or above ``start``'s own (at most ``max_up`` levels) that holds
    ``relative`` (a folder when ``is_dir``, else a file), inside the read boundary; None when
    none does. How a reader finds the checkout of a framework's source the job holds (Megatron-
    Bridge's recipes, NeMo-RL's grpo.py) from the file that names it."""
    check = os.path.isdir if is_dir else os.path.isfile
    folder = os.path.dirname(os.path.abspath(start))
    for _ in range(max_up):
        cand = os.path.join(folder, relative)
        if check(cand) and refuse(folder) is None:   # what it holds is read through the boundary
            return folder
        parent = os.path.dirname(folder)
        if parent == folder or refuse(parent) is not None:
            return None
        folder = parent
    return None
