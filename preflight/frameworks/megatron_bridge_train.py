"""Megatron-Bridge's training launcher: ``./scripts/training/train.sh --nodes 2 --recipe NAME
[run_recipe.py flags] key=value ...`` (and ``python scripts/training/setup_experiment.py ...``,
which train.sh runs), recognised on the launch line; nothing of it is imported.

Read at NVIDIA-NeMo/Megatron-Bridge v0.6.0 (commit 51885cf1, the first release that has it) and
at 067f987d (2026-08-22; the two files differ by two lines of setup_experiment.py's help text):

- ``scripts/training/train.sh`` l.17-27: ``SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")"
  && pwd)"`` then ``exec uv run "${UV_ARGS[@]}" python "${SCRIPT_DIR}/setup_experiment.py"
  "$@"``: every argument reaches setup_experiment.py (the caller's words are bound to ``"$@"``
  by :mod:`preflight.jobs.scriptargs`, so train.sh is read here with them).
- ``scripts/training/setup_experiment.py`` ``_build_parser`` (l.46-139, ``allow_abbrev=False``)
  owns the Slurm options below and ``parse_known_args`` (l.306) forwards every other word,
  unchanged and in order, to ``run_recipe.py`` (``run.Script(path=/opt/Megatron-Bridge/
  scripts/training/run_recipe.py, args=training_args)``, l.324-330): ``--recipe``, the
  convenience flags and the ``key=value`` overrides are read as for ``run_recipe.py``
  (:mod:`.megatron_bridge`). The recipe is the one of the job's own checkout when it holds
  ``src/megatron/bridge/recipes`` (:mod:`.megatron_bridge_source`), else the release table's.
  (run_recipe.py runs from the container's ``/opt/Megatron-Bridge``; a checkout beside it is the
  best evidence of which recipes that container holds, as for ``run_recipe.py`` itself.)
- ``--submission-dry-run`` / ``--dry-run`` only renders the Slurm submission: nothing trains.
"""

from __future__ import annotations

import os
import re
from typing import Any

from preflight.base.digits import argparse_int
from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading import shelldir
from preflight.reading.overridelaunch import LaunchRead, Syntax
from preflight.reading.parse import ParseError, read_text
from preflight.reading.types import ConfigProblem

ENTRY = re.compile(r"(?:^|/)scripts/training/setup_experiment\.py$|"
                   "^" + shelldir.SELF + r"/setup_experiment\.py$")
"""The launcher as written on a line: its path, or train.sh's ``"${SCRIPT_DIR}/..."`` (the
script's own folder, as :mod:`preflight.reading.shelldir` reads ``$(cd "$(dirname
"${BASH_SOURCE[0]}")" && pwd)``: :func:`confirmed` checks the launcher there)."""
HINT = re.compile(r"scripts/training/(?:setup_experiment\.py|train\.sh)|"
                  r"\$\{?SCRIPT_DIR\}?/setup_experiment\.py")
ENTRY_CODE = re.compile(r"scripts/training/run_recipe\.py")
"""What the launcher's text holds (the script it hands the words to, l.324/335 @ v0.6.0)."""
LAUNCHER_VALUES = frozenset({
    "nodes", "gpus-per-node", "gpus_per_node", "account", "partition", "time", "gres",
    "additional-slurm-params", "additional_slurm_params", "container-image", "mount", "env",
    "srun-arg", "lmc", "peak-mem-clk", "peak_mem_clk", "experiment-name"})
"""setup_experiment.py's own options that take a value (v0.6.0 l.66-128); its bare flags are
``--no-gpu-resource-request``, ``--submission-dry-run`` / ``--dry-run`` and ``--wait``."""
_INTS = frozenset({"nodes", "gpus-per-node", "gpus_per_node", "lmc", "peak-mem-clk",
                   "peak_mem_clk"})     # type=int
DRY_RUN = ("submission-dry-run", "dry-run")
SOURCE = ("Megatron-Bridge v0.6.0 scripts/training/train.sh l.27, setup_experiment.py "
          "_build_parser l.46-139 and main l.309-330 (parse_known_args -> run_recipe.py)")
_MAX_LAUNCHER = 1 << 20


def syntax(recipe: Syntax) -> Syntax:
    """run_recipe.py's syntax with the launcher's entry and its own value options."""
    return Syntax(entry=lambda w: bool(ENTRY.search(w)),
                  value_flags=recipe.value_flags | LAUNCHER_VALUES)


def confirmed(path: str, read: LaunchRead) -> str | None:
    """Why the command found is not Megatron-Bridge's training launcher (None: it is). A
    literal ``scripts/training/setup_experiment.py`` is; one in the script's own folder
    (``"${SCRIPT_DIR}/setup_experiment.py"``, :mod:`preflight.reading.shelldir`) only when that
    folder is ``scripts/training`` and its setup_experiment.py forwards to run_recipe.py (a
    folder computed otherwise is a run-time value: no launcher)."""
    assert read.launch is not None
    entry = read.launch.entry
    if not shelldir.starts(entry.text):
        return None
    folder = os.path.dirname(os.path.abspath(path))
    if not folder.replace(os.sep, "/").endswith("/scripts/training"):
        return f"{os.path.basename(path)} is not in a scripts/training folder"
    launcher = os.path.join(folder, "setup_experiment.py")
    try:
        if os.path.getsize(launcher) > _MAX_LAUNCHER or os.path.islink(launcher):
            return f"{launcher} is no Megatron-Bridge launcher (too large or a link)"
        text = read_text(launcher)
    except (OSError, ParseError):
        return f"{launcher} is not in the job"
    if "run_recipe.py" not in text or "parse_known_args" not in text:
        return f"{launcher} does not forward its arguments to run_recipe.py"
    return None


def _int(name: str, value: str) -> int | Unknown:
    """``value`` as argparse's ``type=int`` takes it (:func:`.digits.argparse_int`), or Unknown:
    argparse refuses it. redteam10: ``str.isdigit`` passed ``²``, which ``int()`` refuses, and the
    whole launch script was "could not interpret"."""
    number = argparse_int(value)
    if number is not None:
        return number
    return Unknown(f"--{name} {value[:40]!r} is no integer: argparse refuses it (exit 2)")


def drop_launcher_flags(read: LaunchRead) -> dict[str, tuple[Any, Source]]:
    """Take setup_experiment.py's own options off ``read.flags`` (run_recipe.py never sees
    them) and return them by name (``-`` as ``_``); a ``--dry-run`` is a warning: nothing
    trains."""
    own: dict[str, tuple[Any, Source]] = {}
    for name in sorted({*LAUNCHER_VALUES, *DRY_RUN, "no-gpu-resource-request", "wait"}):
        if name in read.flags:
            value, src = read.flags.pop(name)
            if name in _INTS and isinstance(value, str):
                value = _int(name, value)
            own[name.replace("-", "_")] = (value, src)
    for name in DRY_RUN:
        got = own.get(name.replace("-", "_"))
        if got is not None and got[0] is not False:
            read.problems.append(ConfigProblem(read.path, got[1].line, (
                f"--{name} only renders the Slurm submission (setup_experiment.py): nothing "
                "trains, so this command runs no FP8"), level="warning",
                fix=f"drop --{name} to submit the job"))
    return own
