"""``$PWD`` / ``$(pwd)`` in a launch script: the folder the command runs in, for the walk of
:mod:`.shellcalls` (which follows every ``cd``).

holdout22 (awslabs/awsome-distributed-training 3.test_cases/pytorch/torchtitan README, the
`CONFIG_FILE="$(pwd)/configs/llama3_8b_fp8_compile.toml" sbatch 1.llama_3_8b_torchtitan.sh`
line): ``$(pwd)`` was a run-time value, so the TOML was never read and FP8 was Unknown. A script
no script of the job runs is taken to be run from the folder its relative paths are written
from (:func:`launch_folder`: its own, where its README says to run it, or one above it up to the
job root), and the note says so (:attr:`.shellcalls.Walked.assumed`); one a script of the job runs starts where its caller
was. A ``cd`` changes it; a ``cd`` to a folder not known here, or a folder out of the job (the
read boundary in force), leaves it a run-time value with the reason, never a path outside.
"""

from __future__ import annotations

import os
import re

from preflight.reading.shelltypes import Field, Seg

NAME = "PWD"
"""The variable bash keeps the current folder in (bash(1), "Shell Variables")."""


def fields(folder: str | None, why: str | None, offset: int) -> list[Field]:
    """``$PWD``'s value for the evaluator: ``folder`` (absolute), else a run-time value."""
    if folder is not None:
        from preflight.reading.boundary import current

        boundary = current()
        if boundary is None or boundary.allows(folder):
            return [[Seg(os.path.normpath(folder), offset, ())]]
        why = f"the folder it runs in is {folder}, outside the job: not read"
    return [[Seg("$PWD", offset, (), why or "the folder it runs in is not known here")]]


MAX_PATHS = 64
"""Relative paths of a script looked up to tell which folder it is run from."""

_PATH = re.compile(r"(?<![\w./$~{-])((?:\.\./)*[A-Za-z0-9_][\w.-]*/[\w./-]*[\w-]|"
                   r"[\w.-]+\.(?:sh|py|ya?ml|toml|json)(?![\w.-]))")
"""A relative path (``scripts/env.sh``), or a file name a command runs or reads (``run.sh``)."""
_PWD = re.compile(r"\$(?:\(\s*pwd\s*\)|\{PWD\}|PWD\b)/|`pwd`/")


def launch_folder(script: str, text: str) -> tuple[str, tuple[str, ...]]:
    """The folder a script no script of the job runs is taken to be run from, and the relative
    paths of its text that say so: of its own folder and those above it up to the job root
    (:func:`.launchroot.ancestors`), the one from which the most of them exist (ChatLearn's
    scripts/mcore_vllm/*.sh run ``source scripts/base_env.sh`` from the repository's top);
    its own folder where none or a tie does (where its README says to run it). Only names
    inside the job are looked up (never read)."""
    from preflight.reading.boundary import current
    from preflight.reading.launchroot import ancestors

    own = os.path.dirname(os.path.abspath(script))
    above = ancestors(script)
    boundary = current()
    if not above or boundary is None:
        return own, ()
    text = _PWD.sub(" ", text)          # `$(pwd)/configs/x.toml`: the path from there
    words = list(dict.fromkeys(m.group(1) for m in _PATH.finditer(text)))[:MAX_PATHS]
    best: tuple[int, str, tuple[str, ...]] = (0, own, ())
    tied = False
    for folder in [own, *above]:
        hits = tuple(w for w in words if boundary.allows(p := os.path.normpath(
            os.path.join(folder, w))) and os.path.lexists(p))
        if len(hits) > best[0]:
            best, tied = (len(hits), folder, hits), False
        elif hits and len(hits) == best[0]:
            tied = True
    return (own, ()) if tied else (best[1], best[2])


def assumed_note(script: str, line: int, folder: str, hits: tuple[str, ...]) -> str:
    """The note naming the assumption (the folder a script nobody in the job runs starts in)."""
    name = os.path.basename(script)
    why = (f"the folder its paths {', '.join(hits[:3])} are written from" if hits and
           folder != os.path.dirname(os.path.abspath(script)) else f"{name}'s own folder")
    return (f"$(pwd) / $PWD at line {line} is taken as {folder} ({why}): assumed to be run "
            "from there, as no script read here runs it from elsewhere")
