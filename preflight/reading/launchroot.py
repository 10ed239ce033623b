"""Relative script paths on a launch line, looked up from the folders above the launch script.

A launch script kept deep in a repository often runs its training script by a path relative to
the repository's top, where the upstream docs run it: DiffSynth-Studio's
``examples/qwen_image/model_training/special/fp8_training/Qwen-Image-LoRA.sh`` runs
``accelerate launch examples/qwen_image/model_training/train.py``
(https://github.com/modelscope/DiffSynth-Studio/blob/44c52da807c6c97e7f0501cf48f701736c7e9ce1/examples/qwen_image/model_training/special/fp8_training/Qwen-Image-LoRA.sh,
holdout20). bash resolves it from the current directory, which fp8-doctor does not know; the
readers looked beside the script and in fp8-doctor's own current directory only, so the
training script was "not found here".

A path not found beside the script is now looked up from each folder above it, nearest first,
up to the outermost job root holding it (:mod:`.boundary`: a folder given, the git work tree's
top, ...), never above: one folder holding it is the file the line runs; two or more is a
guess either way, so :func:`find` names the two nearest and picks none (Unknown to the caller).
A ``cd`` before the line decides the folder (the callers look only there); an absolute path, a
path with a ``$`` left, or one that leaves the job (``../../x.py``, a symlink out) is never
looked up here; without a boundary (a reader called directly) nothing above is searched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from preflight.reading.boundary import current, refuse
from preflight.reading.refs import locate
from preflight.reading.types import ConfigProblem

MAX_LEVELS = 32
"""Folders looked at above a launch script (a job deeper than this is looked at this far)."""


@dataclass(frozen=True)
class Found:
    """Where a launch line's relative script is: ``path``, or none; ``ambiguous`` names the
    folders' candidates when more than one folder above the script holds it."""

    path: str | None = None
    ambiguous: tuple[str, ...] = ()

    def why(self, target: str) -> str:
        """The reason the path is not known, for an Unknown or a warning (empty when found or
        simply absent)."""
        if not self.ambiguous:
            return ""
        first, second = self.ambiguous[:2]
        return (f"{target[:120]} is not beside the launch script and two folders above it "
                f"hold it ({first}, {second}): which one runs depends on the folder the job "
                "is launched from, not known here")

    def problem(self, path: str, line: int, verb: str, target: str,
                fix: str | None = None) -> ConfigProblem | None:
        """The warning at ``path:line`` for an ambiguous ``target`` (``verb``: runs, sources),
        or None when it was found or is simply absent."""
        if not self.ambiguous:
            return None
        return ConfigProblem(path, line, f"{verb} {self.why(target)}; the settings it gives the "
                             "job were not read", level="warning", code="reference", fix=fix)


def ancestors(script: str) -> list[str]:
    """The folders above ``script``'s own, nearest first, up to the outermost job root that
    holds it (never above it); none without a boundary or outside every root."""
    boundary = current()
    if boundary is None:
        return []
    here = os.path.realpath(os.path.dirname(os.path.abspath(script)))
    holding = [r for r in boundary.roots
               if here == r or here.startswith(r.rstrip(os.sep) + os.sep)]
    if not holding:
        return []
    top = min(holding, key=len)
    out: list[str] = []
    folder = here
    while folder != top and len(out) < MAX_LEVELS:
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        out.append(parent)
        folder = parent
    return out


def find(target: str, script: str) -> Found:
    """``target`` (a relative path a launch line of ``script`` runs) in the folders above
    ``script`` (:func:`ancestors`), inside the job only; the caller has already looked beside
    the script."""
    target = target.strip()
    if not target or os.path.isabs(target) or "$" in target or "`" in target or \
            target.startswith("~"):
        return Found()
    hits: list[str] = []
    for folder in ancestors(script):
        cand = os.path.normpath(os.path.join(folder, target))
        if not (cand == folder or cand.startswith(folder.rstrip(os.sep) + os.sep)):
            continue         # `../x.py` from a folder above: a guess that climbs, not taken
        if os.path.isfile(cand) and refuse(cand) is None and \
                os.path.realpath(cand) not in {os.path.realpath(h) for h in hits}:
            hits.append(cand)
    if len(hits) > 1:
        return Found(None, tuple(hits[:2]))
    return Found(hits[0] if hits else None)


def locate_script(target: str, script: str) -> str | None:
    """``target`` as a launch line of ``script`` runs it: beside the script or in the current
    directory (:func:`.refs.locate`), else in the one folder above the script holding it."""
    return locate(target, script) or find(target, script).path
