"""Files a config names (``deepspeed_config_file``, ``--deepspeed``, ``--config_file``,
``--yaml-cfg``), resolved as the framework resolves them, and said plainly when not found.

Frameworks open a relative path from the directory the job is launched in, which fp8-doctor does
not know. A reader tries the naming file's folder, then the current directory (:func:`locate`);
what it cannot find comes back as a ``Linked(missing=True)``, and the job reader
(:mod:`.read`) then tries the files the user named or the folder scan found (the JSON passed on
the same command line, whose path ends with the value as written), then each job root (a folder
given, or the folder of a file given). Still not found is a *warning* naming every place looked
at: the file may exist where the job is launched (issue 14: it was an error when fp8-doctor ran
from another folder). Only files inside the job are candidates (:mod:`.boundary`): a reference
found only outside it (``deepspeed: ../../x.json``, an absolute path, a symlink out) is a warning
that it was not read (issue 21 item 2).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from preflight.reading.boundary import current, outside_problem, refuse
from preflight.reading.types import ConfigProblem, Linked


def _existing(target: str, naming_file: str) -> list[str]:
    """Where ``target`` exists: next to ``naming_file``, then in the current directory."""
    target = os.path.expanduser(target.strip())
    candidates = [target] if os.path.isabs(target) else [
        os.path.join(os.path.dirname(naming_file), target), target]
    return [os.path.normpath(c) for c in candidates if os.path.isfile(c)]


def locate(target: str, naming_file: str) -> str | None:
    """``target`` next to ``naming_file``, else in the current directory, else None; only a
    file inside the job counts (:mod:`.boundary`: one outside is reported, never read)."""
    return next((c for c in _existing(target, naming_file) if not refuse(c)), None)


def under_roots(target: str) -> str | None:
    """``target`` (relative) under one of the job's roots (its work tree's top, the current
    directory holding it: where ``python -m pkg.mod`` is run from), inside the job only."""
    boundary = current()
    if boundary is None or os.path.isabs(target):
        return None
    for root in boundary.roots:
        cand = os.path.normpath(os.path.join(root, target))
        if os.path.isfile(cand) and not refuse(cand):
            return cand
    return None


def outside(target: str, naming_file: str) -> str | None:
    """Where ``target`` exists next to ``naming_file`` or in the current directory but outside
    the job (:mod:`.boundary`: reported, never read), or None."""
    return next((c for c in _existing(target, naming_file) if refuse(c)), None) \
        if locate(target, naming_file) is None else None


def named(target: str, kind: str, naming_file: str, source: str, *, key: str,
          line: int | None, overrides: bool = False) -> Linked:
    """A :class:`Linked` for ``target``: resolved when :func:`locate` finds it, else missing."""
    found = locate(target, naming_file)
    return Linked(found or os.path.expanduser(target.strip()), kind, source, overrides,
                  missing=found is None, key=key, line=line)


def resolve_missing(link: Linked, known: Sequence[str], roots: Sequence[str]) -> str | None:
    """Where a link :func:`locate` missed is: a known file whose path ends with it, a job root."""
    target = os.path.normpath(link.path)
    if os.path.isabs(target):
        return None
    tail = os.sep + target
    for path in known:
        norm = os.path.normpath(os.path.abspath(path))
        if norm.endswith(tail) and os.path.isfile(norm) and not refuse(norm):
            return norm
    boundary = current()
    # then the job's wider roots (its git work tree's top, the current directory holding it):
    # where a recipe repository is launched from
    wider = boundary.roots if boundary is not None else ()
    for root in dict.fromkeys((*roots, *wider)):
        cand = os.path.normpath(os.path.join(root, target))
        if os.path.isfile(cand) and not refuse(cand):
            return cand
    return None


def not_found(link: Linked, naming_file: str, roots: Sequence[str], resolution: str,
              ) -> ConfigProblem:
    """The warning for a named file found nowhere, with a fix for this reference; for one found
    only outside the job, the warning that it was not read (:mod:`.boundary`)."""
    target = os.path.expanduser(link.path.strip())
    outside = _existing(target, naming_file) + [
        c for c in (os.path.normpath(os.path.join(r, target)) for r in roots)
        if not os.path.isabs(target) and os.path.isfile(c)]
    problem = outside_problem(outside[0], naming_file, link.line,
                              f"{link.key or 'this key'} names") if outside else None
    if problem is not None:
        return problem
    looked = [os.path.dirname(naming_file) or ".", *roots, "the current directory"]
    looked = list(dict.fromkeys(looked))
    what = link.key or "this key"
    near = os.path.join(os.path.dirname(naming_file), target)
    # a FIFO, a device or a link to one (/dev/zero) is there, but no file to read (redteam3)
    odd = not os.path.isabs(target) and os.path.lexists(near) and not os.path.isfile(near) or \
        os.path.isabs(target) and os.path.lexists(target) and not os.path.isfile(target)
    return ConfigProblem(
        naming_file, link.line,
        f"{what} names {link.path!r}, " + (
            "which is not a regular file (a FIFO, device or folder): not read; " if odd else
            f"which does not exist here (looked in {', '.join(looked)}); ") +
        "its settings were not read, so rules that need them stay undetermined",
        level="warning", code="reference",
        fix=(f"The framework resolves it this way: {resolution}. If the file exists where the job "
             f"is launched, run fp8-doctor from that directory or name the file too "
             f"(fp8-doctor check {os.path.basename(naming_file)} PATH/TO/"
             f"{os.path.basename(link.path)}); otherwise fix the path."))
