"""``$PWD`` / ``$(pwd)`` in a launch script: the folder the command runs in, for the walk of
:mod:`.shellcalls` (which follows every ``cd``).

holdout22 (awslabs/awsome-distributed-training 3.test_cases/pytorch/torchtitan README, the
`CONFIG_FILE="$(pwd)/configs/llama3_8b_fp8_compile.toml" sbatch 1.llama_3_8b_torchtitan.sh`
line): ``$(pwd)`` was a run-time value, so the TOML was never read and FP8 was Unknown. A script
no script of the job runs is taken to be run from its own folder (where its README says to run
it; :func:`.shellcalls.folder_of` assumes the same for a relative ``cd``), and the note says
so (:attr:`.shellcalls.Walked.assumed`); one a script of the job runs starts where its caller
was. A ``cd`` changes it; a ``cd`` to a folder not known here, or a folder out of the job (the
read boundary in force), leaves it a run-time value with the reason, never a path outside.
"""

from __future__ import annotations

import os

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


def assumed_note(script: str, line: int) -> str:
    """The note naming the assumption (the folder a script nobody in the job runs starts in)."""
    name = os.path.basename(script)
    return (f"$(pwd) / $PWD at line {line} is taken as {name}'s own folder "
            f"({os.path.dirname(os.path.abspath(script))}): assumed to be run from there, as "
            "no script read here runs it from elsewhere")
