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
from collections.abc import Callable
from typing import TYPE_CHECKING

from preflight.reading.shelltypes import Field, Seg

if TYPE_CHECKING:
    from preflight.reading.shellcalls import Folder, Walked
    from preflight.reading.types import ConfigProblem

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


def lookup(walked: Walked, path: str, outer: dict[str, str] | None,
           used: list[tuple[int, str]]) -> Callable[[int], list[Field]]:
    """``$PWD`` at an offset of the launch script at ``path`` as the walk of
    :mod:`.shellcalls` knows it (every ``cd`` followed; a script no script of the job runs
    starts in :func:`launch_folder`), for the words of its launch line (shell16: ``torchrun
    $(pwd)/train.py --config $PWD/cfg.yaml`` was a run-time value; only assignments to a
    called script's environment were resolved); ``used`` gets each offset asked for where
    the launch folder was assumed, with that folder (the note says so: :func:`assumed_note`)."""
    from preflight.reading.shellcalls import CWD, folder_of

    outer = outer or {}

    def at(offset: int) -> list[Field]:
        start = {CWD: walked.start[0]} if CWD not in outer and walked.start is not None else {}
        folder, why = folder_of(walked.folder_at(offset), path, {**outer, **start})
        if start and folder is not None and len(used) < 64:
            used.append((offset, os.path.normpath(folder)))
        return fields(folder, why, offset)

    return at


_LEADING = re.compile(r"(?:\$\(\s*pwd(?:\s+-[LP])?\s*\)|\$\{PWD\}|\$PWD\b|`pwd`)/+(?=[^/])")


def relative(word: str) -> str | None:
    """``train.py`` of ``$(pwd)/train.py`` / ``$PWD/...`` / ``${PWD}/...`` / `` `pwd`/... ``
    (quotes removed): a path from the folder the command runs in; None: no such word."""
    m = _LEADING.match(word.replace('"', "").replace("'", ""))
    if m is None:
        return None
    rest = word.replace('"', "").replace("'", "")[m.end():]
    return None if "$" in rest or "`" in rest else rest


def script_at(rest: str, path: str, outer: dict[str, str], walked: Walked, moved: Folder,
              line: int, problems: list[ConfigProblem]) -> str:
    """``$(pwd)/train.py`` on a launch line (:func:`relative` gave ``rest``): the script in the
    folder the line runs in, the launch folder of a script nobody in the job runs assumed and
    said once (:func:`assumed_note`); "" where that folder is not known here."""
    from preflight.reading.shellcalls import CWD, folder_of
    from preflight.reading.types import ConfigProblem

    start = {CWD: walked.start[0]} if CWD not in outer and walked.start is not None else {}
    folder, _ = folder_of(moved, path, {**outer, **start})
    if folder is None:
        return ""
    if start and walked.start is not None and len(problems) < 64 and not any(
            p.code == "assumed_folder" for p in problems):
        problems.append(ConfigProblem(path, line, assumed_note(path, line, *walked.start),
                                      level="info", code="assumed_folder"))
    return os.path.join(folder, rest)
