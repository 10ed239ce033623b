"""Module launches: the ``-m pkg.mod`` a launch line runs, its arguments, and the file of the job
that holds it (issue 22: nanochat's ``torchrun --standalone --nproc_per_node=8 -m
scripts.base_train -- --depth=24 --fp8``, karpathy/nanochat runs/speedrun.sh @ 92d63d4e).

Launchers read (the word ``-m`` / ``--module`` means "the next positional is a module"):

- ``python [opts] -m pkg.mod args`` (``-mpkg.mod`` too), ``uv run [opts] -m pkg.mod args``;
- ``torchrun [opts] -m pkg.mod args``, ``python -m torch.distributed.run [opts] -m pkg.mod``
  (also ``.launch``), ``accelerate launch [opts] -m pkg.mod``, ``deepspeed [opts] --module
  pkg.mod``: these parse their own line with argparse (a ``training_script`` positional, then
  ``nargs=REMAINDER``), so a ``--`` right after the module is theirs, not the script's
  (argparse strips the first ``--`` a plain positional consumes); ``python -m mod -- x`` passes
  the ``--`` on, and the script's own argparse then takes nothing after it as an option.
- ``colossalai run [opts] -m pkg.mod args`` (ColossalAI >= 0.4.7, hpcaitech/ColossalAI #6135,
  colossalai/cli/launcher/__init__.py L67-L125 @ v0.5.0; before it the launcher refuses a
  script not ending in ``.py``): click, so ``-m`` is an option with a value (``-mpkg.mod``
  too, the last one wins), the launcher's own options are taken wherever they stand (click
  intersperses: ``-m mod --nproc_per_node 8 --fp8`` gives the module ``--fp8``), unknown ones
  are the module's, and the first ``--`` ends the options and is dropped.

A module is found as ``python -m`` finds it from the folder the command runs in (``sys.path[0]``):
a regular package ``pkg/mod/__init__.py`` runs ``pkg/mod/__main__.py``, else ``pkg/mod.py``,
else a namespace folder's ``__main__.py`` (importlib's FileFinder order). The folder is the one a
``cd`` in the script left, else the folder the script starts in (its own, or its caller's), then
each job root (a repository's scripts are launched from its top); never outside the job
(:mod:`.boundary`: a symbolic link out is refused), never with ``..``, ``/`` or a name that is
not a dotted identifier. Nothing is imported or run.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from preflight.reading.boundary import current, refuse
from preflight.reading.launch import MAX_SCRIPTS, launcher_commands
from preflight.reading.shellbranch import argv_word
from preflight.reading.shellvars import typed

LAUNCHER_MODULES = frozenset({"torch.distributed.run", "torch.distributed.launch",
                              "accelerate.commands.launch", "deepspeed.launcher.runner"})
"""Modules that are launchers themselves: the module they run comes after their options."""
_ARGPARSE = re.compile(r"torchrun|deepspeed|accelerate(?:-launch)?|-m")
"""Launchers that parse their line with argparse (the words, as the launch regex matches them)."""
_PYTHON = re.compile(r"python[0-9.]*")
_ENDS = re.compile(r"-[BbdEhiIOPqsSuvVx]*c.*|-")
"""Python's own options that end them without a module (CPython's ``-c cmd``, a ``-`` for
stdin, also inside a cluster such as ``-Bc``): what follows ``-m`` then is the code's argv."""
_VALUED = re.compile(r"-[BbdEhiIOPqsSuvVx]*[WX]|--check-hash-based-pycs")
"""Python's options that take the next word as their value (``-W ignore``, ``-X dev``)."""
_CLICK = re.compile(r"colossalai[ \t]+run")
"""The launcher (``colossalai run``, :data:`.launch._LAUNCHER`) that parses its line with click."""
_CLICK_VALUED = frozenset({"-H", "-host", "--host", "--hostfile", "--include", "--exclude",
                           "--num_nodes", "--nproc_per_node", "--master_port", "--master_addr",
                           "--extra_launch_args", "--ssh-port"})
"""``colossalai run``'s own options, each taking a value (launcher/__init__.py L8-L66 @ v0.5.0)."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,15}")
MAX_NAME = 200


@dataclass(frozen=True)
class ModuleRun:
    """One ``-m pkg.mod`` of a launch line."""

    module: str                  # as written, ``$VAR`` expanded
    argv: tuple[str, ...]        # what the module's sys.argv[1:] is
    pos: int                     # offset of the module's word in the text


def module_runs(text: str, variables: dict[str, str]) -> list[ModuleRun]:
    """The modules the launch lines of ``text`` run with ``-m`` (at most
    :data:`.launch.MAX_SCRIPTS`); a line that runs a ``.py`` is :func:`.launch.python_scripts`'.
    Worked out once for the last few texts (a launch script asks three times)."""
    key = (text, tuple(sorted(variables.items())))
    if key not in _RUNS:
        if len(_RUNS) >= 4:
            _RUNS.pop(next(iter(_RUNS)))
        _RUNS[key] = _module_runs(text, variables)
    return list(_RUNS[key])


_RUNS: dict[tuple[str, tuple[tuple[str, str], ...]], list[ModuleRun]] = {}


def _module_runs(text: str, variables: dict[str, str]) -> list[ModuleRun]:
    found: list[ModuleRun] = []
    for m, words in launcher_commands(text):
        if len(found) >= MAX_SCRIPTS:
            break
        run = _run(m.group(0), words, variables, text)
        if run is not None:
            found.append(run)
    return found


def _run(launcher: str, words: list[tuple[str, int]], variables: dict[str, str],
         text: str = "") -> ModuleRun | None:
    """The module run by the words after ``launcher``, or None (a ``.py``, no ``-m``)."""
    parser = _parser(launcher)
    if parser == "click":
        return _click_run(words, variables, text)
    own = parser == "python" and launcher.split()[0] != "uv"   # the interpreter's own options
    i = 0
    while i < len(words):
        word = words[i][0]
        if "$" in word or word[:1] in "\"'":
            word = str(typed(word, variables))
        if word.endswith(".py") and not word.startswith("-"):
            return None                               # a script: python_scripts reads it
        name = os.path.basename(word)
        if own and parser == "python" and _ENDS.fullmatch(word):
            return None      # redteam8: `python -c CODE -m x`, `python - -m x`: -m is argv
        if own and parser == "python" and _VALUED.fullmatch(word):
            i += 2                                    # `-W ignore`, `-X dev`: not a module
            continue
        if i + 1 < len(words) and _CLICK.fullmatch(f"{name} {words[i + 1][0]}"):
            return _click_run(words[i + 2:], variables, text)   # `srun colossalai run -m x`
        if _PYTHON.fullmatch(name):
            parser, own = "python", True
        elif _ARGPARSE.fullmatch(name) and name != "-m" and (
                not name.startswith("acc") or name.endswith("-launch") or
                i + 1 < len(words) and words[i + 1][0] == "launch"):
            parser = "argparse"
        elif parser is not None and (word in ("-m", "--module") or
                                     parser == "python" and word.startswith("-m") and
                                     len(word) > 2):
            at = i if len(word) > 2 and word not in ("--module",) else i + 1
            if at >= len(words):
                return None
            module = word[2:] if at == i else str(typed(words[at][0], variables))
            if not _NAME.fullmatch(module) or len(module) > MAX_NAME:
                return None                           # `$MOD` unset, a path, `..`: not known
            if module in LAUNCHER_MODULES:
                parser, i = "argparse", at + 1
                continue
            argv = [argv_word(w, text, variables) for w, _ in words[at + 1:]]
            if parser == "argparse" and argv[:1] == ["--"]:
                argv = argv[1:]
            return ModuleRun(module, tuple(argv), words[at][1])
        i += 1
    return None


def _click_run(words: list[tuple[str, int]], variables: dict[str, str],
               text: str) -> ModuleRun | None:
    """``colossalai run``'s line as click parses it: the last ``-m`` names the module, every
    word that is not one of the launcher's options (a script named before ``-m`` included:
    click prepends it to the user's args) is the module's argv; no ``-m``: None (a ``.py``
    is :func:`.launch.python_scripts`')."""
    module: tuple[str, int] | None = None
    argv: list[tuple[str, int]] = []
    i = 0
    while i < len(words):
        word = words[i][0]
        if "$" in word or word[:1] in "\"'":
            word = str(typed(word, variables))
        if word == "--":
            argv.extend(words[i + 1:])        # click ends its options and drops the `--`
            break
        if word == "-m" or word.startswith("-m") and not word.startswith("--"):
            if word == "-m" and i + 1 >= len(words):
                return None                   # click: "-m option requires an argument"
            module = (word[2:], words[i][1]) if word != "-m" else (
                str(typed(words[i + 1][0], variables)), words[i + 1][1])
            i += 1 if word != "-m" else 2
            continue
        joined = word.startswith("--") and "=" in word    # `--nproc_per_node=8`
        if (word.partition("=")[0] if joined else word) in _CLICK_VALUED:
            i += 1 if joined else 2
            continue
        if word.startswith("-H") and word != "-host":     # `-Hhost1,host2`: -H's value joined
            i += 1
            continue
        argv.append(words[i])
        i += 1
    if module is None or not _NAME.fullmatch(module[0]) or len(module[0]) > MAX_NAME:
        return None                           # `-m=x`, `$MOD` unset, a path: not known
    return ModuleRun(module[0], tuple(argv_word(w, text, variables) for w, _ in argv),
                     module[1])


def _parser(launcher: str) -> str | None:
    """How the launcher matched reads ``-m``: ``python`` (takes a module), ``argparse``
    (torchrun & co: a flag, the module the next positional), ``click`` (``colossalai run``:
    an option with a value), None (``srun``, ``mpirun``, ``composer``: ``-m`` is theirs,
    e.g. srun's ``--distribution``)."""
    if _CLICK.fullmatch(launcher):
        return "click"
    word = launcher.split()[0]
    if _PYTHON.fullmatch(word) or word == "uv":
        return "python"
    if _ARGPARSE.fullmatch(word):
        return "argparse"
    return None


@dataclass(frozen=True)
class Found:
    """Where a module is: its file and the folder it was found from (``sys.path[0]``), or why
    it is not known here."""

    path: str | None = None
    root: str | None = None
    why: str | None = None
    outside: str | None = None    # a candidate that exists outside the job (refused)


def locate_module(module: str, folders: list[str]) -> Found:
    """The file ``python -m module`` runs from the first of ``folders`` that holds it inside the
    job; :class:`Found` with ``why`` when none does."""
    parts = module.split(".")
    if not _NAME.fullmatch(module) or any(not p.isidentifier() for p in parts):
        return Found(why=f"{module[:80]!r} is not a module name")
    outside: str | None = None
    for folder in dict.fromkeys(folders):
        for cand in _candidates(folder, parts):
            if not os.path.isfile(cand):
                continue
            if refuse(cand) is not None:
                outside = outside or cand
                continue
            return Found(os.path.normpath(cand), folder)
    return Found(why=f"-m {module[:120]} is not a file of the job (looked for "
                     f"{'/'.join(parts)}.py and {'/'.join(parts)}/__main__.py from "
                     f"{', '.join(f or '.' for f in list(dict.fromkeys(folders))[:4])})",
                 outside=outside)


def _candidates(folder: str, parts: list[str]) -> list[str]:
    """The file ``-m`` runs under ``folder``, in importlib's order (a regular package, a module
    file, a namespace package); a package without ``__main__.py`` cannot be run: none."""
    base = os.path.join(folder, *parts)
    if os.path.isfile(os.path.join(base, "__init__.py")):
        return [os.path.join(base, "__main__.py")]
    if os.path.isfile(base + ".py"):
        return [base + ".py"]
    return [os.path.join(base, "__main__.py")] if os.path.isdir(base) else []


def job_roots() -> list[str]:
    """The job roots of the current read (:mod:`.boundary`)."""
    boundary = current()
    return list(boundary.roots) if boundary is not None else []


def in_job(module: str, folders: list[str]) -> bool:
    """Whether the top package of ``module`` is a folder or file of the job under one of
    ``folders`` (so a module not found there is the job's, not an installed package)."""
    top = module.split(".")[0]
    return any((os.path.isdir(os.path.join(f, top)) or os.path.isfile(os.path.join(f, top + ".py")))
               and refuse(os.path.join(f, top)) is None for f in folders)
