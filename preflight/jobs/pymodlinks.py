"""The job's own modules a launch script runs with ``-m`` (:mod:`preflight.reading.pymodrun`),
linked as the Python script the line runs, with the words after the module as its argv (issue 22:
``torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --fp8``, karpathy/nanochat
runs/speedrun.sh:68 @ 92d63d4e).

A module a framework's launch command names stays that framework's (``-m verl.trainer.main_ppo``,
``-m axolotl.cli.train``, ``-m torchtitan.train``, ``-m openrlhf.cli.train_sft``, NeMo's ``-m
scripts.performance.llm.X``, SkyRL's own ``-m pkg.main_x`` with SkyRL overrides on the line):
:func:`claimed` leaves the line to its reader, as before. Otherwise the module's file, found as
``python -m`` finds it from the folder the command runs in (a ``cd`` in the script, else the
folder the script starts in, then each job root), is linked with ``Linked.syspath``: that folder,
the ``sys.path[0]`` the module's own imports are found from (``from nanochat.fp8 import ...``).
One not found whose top package is a folder of the job is a warning at its line (its settings
Unknown); one whose package the job does not hold is an installed tool (``python -m pip``) and
left out quietly, as a ``.py`` not found is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from preflight.findings import Source
from preflight.jobs import launchfacts
from preflight.reading import launch, launchroot, shellcalls
from preflight.reading.boundary import outside_reference
from preflight.reading.pymodrun import ModuleRun, in_job, job_roots, locate_module, module_runs
from preflight.reading.types import ConfigProblem, Linked

if TYPE_CHECKING:
    from preflight.frameworks import Framework


def claimed(text: str, pos: int, frameworks: Sequence[Framework]) -> bool:
    """Whether the command line at ``pos`` is a framework's launch command (its reader reads
    it, the module included): the module or its arguments are the framework's
    (``-m verl.trainer.main_ppo``, SkyRL overrides). A launcher before the module
    (``accelerate launch -m pkg.train``) runs the job's module as it runs a ``.py``: the
    module is still the job's script (redteam8: its own FP8 was read as "no")."""
    start, end = launch.command_at(text, pos)
    line = text[start:end]
    return any(fw.launch is not None and fw.launch.command is not None and
               any(m.end() > pos - start for m in fw.launch.command.finditer(line))
               for fw in frameworks)


def packages(frameworks: Sequence[Framework]) -> frozenset[str]:
    """The top-level packages of the frameworks read (their kinds and distribution names):
    ``-m torchtitan.experiments.rl.train`` is torchtitan's own module, never the job's script
    (a framework's checkout is read by its reader, or not at all)."""
    return frozenset({fw.kind for fw in frameworks} |
                     {d.replace("-", "_") for fw in frameworks for d in fw.distributions})


def runs(clean: str, variables: dict[str, str], frameworks: Sequence[Framework],
         ) -> list[ModuleRun]:
    """The ``-m`` runs of ``clean`` no framework claims (its launch command, its package)."""
    own = packages(frameworks)
    return [r for r in module_runs(clean, variables) if r.module.split(".")[0] not in own and
            not claimed(clean, r.pos, frameworks)]


def folders(path: str, pos: int, outer: dict[str, str],
            walked: shellcalls.Walked | None) -> tuple[list[str], str | None]:
    """Where ``python -m`` looks for the module of the line at ``pos``: the folder a ``cd``
    left (only that one), else the folder the script starts in, each folder above it up to the
    job root, then each job root; or why
    that folder is not known (``cd $(...)``)."""
    moved = walked.folder_at(pos) if walked is not None else shellcalls.Folder()
    start, why = shellcalls.folder_of(moved, path, outer)
    if start is None:
        return [], why
    if moved.path:
        return [start], None
    # a module of a package beside a folder above the script (`cd` to the repository's top, as
    # its docs say, then `bash examples/x/run.sh`): looked for nearest first, never above the job
    # root (launchroot.ancestors), as a relative script path is (holdout20 RL2, shfix3)
    return list(dict.fromkeys((start, *launchroot.ancestors(path), *job_roots()))), None


def links(path: str, clean: str, variables: dict[str, str], outer: dict[str, str],
          walked: shellcalls.Walked | None, frameworks: Sequence[Framework], trains: bool,
          problems: list[ConfigProblem]) -> list[Linked]:
    """The module files the launch lines of ``clean`` run, linked like a ``.py`` they run
    (``overrides``, ``argv``, ``environ``; ``after`` for one that evaluates or exports beside
    a training one: ``trains``); ``problems`` gets a module of the job not found."""
    found: list[Linked] = []
    for run in runs(clean, variables, frameworks):
        line = clean.count("\n", 0, run.pos) + 1
        where, why = folders(path, run.pos, outer, walked)
        got = locate_module(run.module, where)
        if got.path is None or got.root is None:
            if got.outside is not None:
                outside_reference(got.outside, path, line, f"-m {run.module[:80]} runs")
            elif (why is not None or in_job(run.module, where or job_roots())) and \
                    not launch.not_training(run.module) and len(problems) < 64:
                problems.append(ConfigProblem(path, line, (
                    f"runs the module {run.module[:120]!r}, which was not found here ("
                    f"{why or got.why}): the settings it gives the job were not read")[:600],
                    level="warning", code="reference"))
            continue
        link = Linked(got.path, "", Source(path, line), key=f"-m {run.module[:120]}", line=line)
        if trains and launch.not_training(run.module):
            found.append(replace(link, after=True))
        else:
            found.append(replace(link, overrides=True, argv=run.argv, syspath=got.root,
                                 environ=launchfacts.environ(path, clean, run.pos, variables,
                                                             outer)))
    return found


def trains(clean: str, variables: dict[str, str], scripts: Sequence[str],
           frameworks: Sequence[Framework]) -> bool:
    """Whether a script or module the text runs trains (so those that evaluate are "after")."""
    names = [*scripts, *(r.module for r in runs(clean, variables, frameworks))]
    return not all(launch.not_training(n) for n in names)


def first_training(path: str, clean: str, variables: dict[str, str], outer: dict[str, str],
                   frameworks: Sequence[Framework]) -> int | None:
    """The offset of the first module run of the job that trains (found here: ``python -m
    nanochat.dataset`` before it is an installed or missing tool), or None."""
    return next((r.pos for r in runs(clean, variables, frameworks)
                 if not launch.not_training(r.module) and
                 locate_module(r.module, folders(path, r.pos, outer, None)[0]).path), None)

