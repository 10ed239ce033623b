"""What runs first in fp8-doctor's own processes: the module path, and signals (issue 21).

The entry points are the console script ``fp8-doctor`` (:func:`entry`), ``python -m preflight``
(``preflight/__main__.py``) and ``python -m preflight.cluster`` (``preflight/cluster/__main__.py``,
:func:`run_module`). Library users (``import preflight``) never run this module.

**The module path** (item 1). ``python -m`` puts the current folder first on ``sys.path`` before
any code of ours runs, and ``PYTHONPATH`` may hold ``''``, ``.`` or a relative entry (Python reads
them as the current folder): a ``json.py``, ``yaml.py`` or ``torch/`` there would be imported by
our next import. :func:`guard` takes those entries off ``sys.path`` (``isolate.prune_sys_path``)
and says on stderr which modules the folder would have shadowed. What it cannot cover: what
Python imported before this module ran. That is the interpreter's own start-up, and for ``python
-m preflight`` the ``preflight`` package itself: in a folder holding a ``preflight/`` package,
Python runs that package, not fp8-doctor, and no code of ours can prevent it. The console script
is not exposed (its ``sys.path[0]`` is the scripts folder), which is why the docs recommend it.
``preflight/__init__.py`` and this module import nothing but ``os`` and ``sys`` (loaded with the
interpreter), and not ``from __future__`` either (a real import, of a module a folder could hold).

**Signals** (item 8). :func:`entry` is the console script's first code, and Ctrl-C from then on
ends the run with exit 130 and one line, never a traceback (Ctrl-C 22 ms in, while
``preflight.cli`` loaded, printed one). SIGTERM and SIGHUP are turned into the same clean
unwinding (``finally`` blocks remove temporary folders) and exit 128 + the signal (143, 129),
instead of killing the process where it stands. Children run in their own sessions, so the
terminal's Ctrl-C never reaches them: every child still running is killed with its process group
(``proc.kill_all``) before the process exits, whatever ended it.
"""

import os
import sys

# The signal state every layer shares (base.proc holds signals while it starts a child); the
# floor module imports only os and sys, like this one.
from preflight.base.signals import finish, hold_signals, install_signals, reason

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


THIRD_PARTY = ("preflight", "yaml", "_yaml", "packaging", "rich", "pygments", "markdown_it",
               "mdurl", "pynvml", "tomli", "ruamel", "tomlkit", "typing_extensions", "numpy",
               "triton", "transformer_engine_torch", "matplotlib", "nvidia")
"""Top-level modules beyond the standard library that fp8-doctor or its children import (with
the FP8 stack the import probe imports, ``probes.imports.MODULES``)."""
MAX_LISTED = 10_000
"""Entries of a folder looked at for shadows (a huge folder is not listed to its end)."""
GC_THRESHOLD = (200_000, 30, 30)
"""The collector's thresholds from the console script's first line on, as
:func:`preflight.cli.main` sets them for a run (``cli.GC_THRESHOLD``; a test holds the two
equal): the imports before ``main`` ran ~15 young collections with the default (700), for
objects that all live to the end (issue 26 item 4)."""



def _shadows(folder: str) -> "list[str]":
    """Names in ``folder`` that would be imported instead of a module we (or a child) import."""
    import _imp

    from preflight.probes.imports import MODULES  # the folder is off sys.path by now

    wanted = set(getattr(sys, "stdlib_module_names", ())) | set(THIRD_PARTY) | set(MODULES)
    suffixes = [".py", ".pyc", *_imp.extension_suffixes()]
    ours = os.path.dirname(os.path.realpath(sys.modules["preflight"].__file__ or ""))
    found: "list[str]" = []
    try:
        with os.scandir(folder) as it:
            for n, item in enumerate(it):
                if n >= MAX_LISTED:
                    break
                name = item.name
                if os.path.isfile(os.path.join(folder, name, "__init__.py")):
                    if name in wanted and os.path.realpath(item.path) != ours:
                        found.append(name + "/")
                    continue
                for suffix in suffixes:
                    if name.endswith(suffix) and name[: -len(suffix)] in wanted:
                        found.append(name)
                        break
    except OSError:
        return []
    return sorted(found)


def _loaded_from(folders: "list[str]") -> "list[str]":
    """Top-level modules already imported from ``folders`` as path entries (before our code
    ran), ours aside: ``F/name.py`` or ``F/name/__init__.py``, not anything deeper (a project's
    own ``.venv`` lies inside its folder, and its site-packages are another path entry)."""
    out = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or "." in name or name in ("__main__", "preflight"):
            continue
        real = os.path.realpath(path)
        parent = os.path.dirname(real)
        if os.path.basename(real).startswith("__init__."):
            parent = os.path.dirname(parent)
        if parent in folders:
            out.append(name)
    return sorted(out)


def say(line: str) -> None:
    """One line on stderr, escaped (paths come from outside); nothing when stderr is gone."""
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in line)
    try:
        os.write(2, (text + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def guard(command: str) -> None:
    """Take the current folder and unsafe ``PYTHONPATH`` entries off ``sys.path``; warn on
    stderr when one of them held a module we import."""
    from preflight.base import isolate

    cwd = isolate._cwd()
    isolate.notice = say
    removed = isolate.prune_sys_path()
    folders = list(dict.fromkeys(os.path.realpath(p or os.curdir) for p in removed))
    folders = [f for f in folders if os.path.isdir(f)]
    for folder in folders:
        names = _shadows(folder)
        if not names:
            continue
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        how = (f"`{command}` put the current folder" if folder == cwd and command.startswith(
            "python -m") else "PYTHONPATH put it")
        say(f"fp8-doctor: warning: {folder} holds {shown}, and {how} on Python's module path; "
            "fp8-doctor took it off the path, so none of them is imported by fp8-doctor or "
            "its child processes")
    early = _loaded_from(folders)
    if early:
        say("fp8-doctor: warning: imported from there before fp8-doctor's code ran (that code "
             f"has run): {', '.join(early[:8])}; run the `fp8-doctor` command instead")


def interrupted() -> "NoReturn":
    """A signal ended the run before the command's own handling took over: one line, no
    traceback, 128 + the signal."""
    hold_signals()
    say(f"fp8-doctor: error: {reason()}")
    finish(130)


def entry(command: str = "fp8-doctor") -> "NoReturn":
    """The console script ``fp8-doctor`` and ``python -m preflight``."""
    import gc  # built into the interpreter: no folder on sys.path can shadow it

    gc.set_threshold(*GC_THRESHOLD)   # for the whole process, which ends in cli.entry
    try:
        install_signals()
        guard(command)
        from preflight.cli import entry as cli_entry

        cli_entry()   # leaves through finish()
    except KeyboardInterrupt:
        interrupted()
    raise SystemExit(3)   # pragma: no cover - cli.entry never returns


def run_module(command: str, module: str) -> "NoReturn":
    """``python -m preflight.cluster``: the same guard and signals, then ``module.main()``."""
    try:
        install_signals()
        guard(command)
        from importlib import import_module

        main = import_module(module).main
        code = main()
    except KeyboardInterrupt:
        interrupted()
    except SystemExit as exc:   # argparse: --help, a usage error
        if exc.code is not None and not isinstance(exc.code, int):
            say(str(exc.code))
            finish(1)
        code = exc.code or 0
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    finish(code)
