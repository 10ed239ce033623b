"""A Python job file read by every framework that knows calls in it (``read_python``).

``train.py`` named by a launch line (``accelerate launch --mixed_precision fp8 train.py``) is
read with that line's arguments (argparse options and ``HfArgumentParser`` take their values from
them); a ``.py`` given or found in a job folder is read alone. The file is parsed by
:mod:`.pysource`, never imported or run. A file none of the frameworks finds anything in is said
so, with what was looked for, and leaves the job's FP8 undetermined rather than "not asked".
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from preflight.jobs.pyimports import SYS_PATH, conditional, imports_job_module, read_helpers
from preflight.jobs.pynames import link
from preflight.reading.launchenv import Given
from preflight.reading.parse import MAX_BYTES, ParseError, read_text
from preflight.reading.pyconv1d import FACT as CONV1D
from preflight.reading.pyconv1d import conv1d_model
from preflight.reading.pyenviron import Environ
from preflight.reading.pyenvset import UNSET, left
from preflight.reading.pyfacts import plain
from preflight.reading.pyoutside import know
from preflight.reading.pysource import Module, parse
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

NOTEBOOK = (".ipynb",)


def read(path: str, kind: str | None, explicit: bool, argv: tuple[str, ...] | None,
         entry: str | None = None, environ: Environ | None = None, syspath: str | None = None,
         ) -> tuple[str | None, ReaderOutput]:
    """``(kind, facts)`` of a Python job file; raises :class:`ParseError` for one that cannot
    be used. ``kind``: only that framework's calls (``--kind``); ``environ``: what the launch
    lines that run it give its environment (:mod:`.pyenviron`), None when none was read;
    ``syspath``: the folder a module run with ``-m`` was found from (its imports' root)."""
    token = SYS_PATH.set(syspath)
    try:
        return _read(path, kind, explicit, argv, entry, environ)
    finally:
        SYS_PATH.reset(token)


def _read(path: str, kind: str | None, explicit: bool, argv: tuple[str, ...] | None,
          entry: str | None, environ: Environ | None) -> tuple[str | None, ReaderOutput]:
    from preflight.frameworks import BY_KIND, FRAMEWORKS

    know(name for fw in FRAMEWORKS for name in (fw.kind, *fw.distributions))   # pyoutside
    if path.lower().endswith(NOTEBOOK):
        raise ParseError("a notebook is not read (fp8-doctor reads .py scripts by their syntax "
                         "tree); export it with `jupyter nbconvert --to script` and name the "
                         ".py", code="not_a_config", level="warning")
    if kind is not None and BY_KIND[kind].read_python is None:
        if not explicit:
            return None, ReaderOutput()
        raise ParseError(f"{BY_KIND[kind].title} settings are not read from Python files; name "
                         f"its config file ({', '.join(BY_KIND[kind].formats)})",
                         code="not_a_config", level="warning")
    text = read_text(path)
    readers = [BY_KIND[kind]] if kind is not None else \
        [f for f in FRAMEWORKS if f.read_python is not None]
    hinted = [f for f in readers if f.python_hint is None or f.python_hint.search(text)]
    if not hinted and not imports_job_module(text, path):
        if not explicit:
            return None, ReaderOutput()
        raise ParseError(nothing_found(readers), code="not_a_config", level="warning",
                         fix=NOTHING_FIX)
    # a script the user named that no launch line read runs (a launch line brings its argv):
    # read as `python FILE.py`, its argparse defaults, with the note saying so
    module = _module(path, text, argv, entry, environ, explicit and entry is None and argv is None)
    _, out = _frameworks(module, hinted, text)
    facts, prov = dict(out.facts), dict(out.provenance)
    problems, linked = list(out.problems), list(out.linked)
    modules = [module]      # the script and the job modules it calls into: pyconv1d

    def one(helper: Module, text: str) -> tuple[str | None, ReaderOutput]:
        modules.append(helper)
        return _frameworks(helper, readers, text)
    for helper in read_helpers(module, one):
        if helper.broken:
            problems.extend(helper.out.problems)
            continue
        # the job's own modules it calls into, read with the values it passes them: their
        # settings are this script's (a later file's are not: this one's first)
        for name, value in helper.out.facts.items():
            if name not in facts:
                facts[name] = conditional(helper, value)
                prov[name] = helper.out.provenance.get(name, helper.path)
        linked.append(Linked(helper.path, helper.kind or "", f"{helper.importer}:{helper.line}",
                             key="import", line=helper.line, included=True))
    environment(module, facts, prov)
    if module.defaulted:
        problems.append(by_hand(module))
    present = _present(facts)
    got = next((f.kind for f in FRAMEWORKS if f.kind in present), None)
    if got is None:
        if not explicit:
            return None, ReaderOutput()
        if problems:         # a reader said why (a torchtitan registry with several configs)
            return None, ReaderOutput(problems=tuple(problems))
        raise ParseError(nothing_found(readers), code="not_a_config", level="warning",
                         fix=NOTHING_FIX)
    conv1d = conv1d_model(modules)
    if conv1d is not None and f"config.{got}.{CONV1D}" not in facts:
        facts[f"config.{got}.{CONV1D}"], prov[f"config.{got}.{CONV1D}"] = conv1d
    return got, ReaderOutput(facts, prov, tuple(problems), tuple(linked))


def environment(module: Module, facts: dict[str, Any], prov: dict[str, Any]) -> None:
    """``env.*`` facts for what the script's top level leaves in ``os.environ`` before the
    settings read from it are made (:mod:`.pyenvset`): a write after every top-level statement
    those settings come from is not theirs; a function's settings run when it is called, after."""
    from preflight.redact import ENV_PREFIXES

    state = left(module)
    tops = [(s.lineno, getattr(s, "end_lineno", s.lineno) or s.lineno,
             isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
            for s in module.tree.body]
    used = [_top(tops, src) for n, src in prov.items() if n.startswith("config.")
            and getattr(src, "path", None) == module.path]
    last = max((u for u in used if u is not None), default=len(tops))
    for name, write in state.vars.items():
        if name.startswith(ENV_PREFIXES) and write.top < last and write.value != UNSET:
            facts[f"env.{name}"] = str(write.value) if isinstance(write.value, str) else \
                plain(write.value)
            prov[f"env.{name}"] = write.where


def _top(tops: list[tuple[int, int, bool]], src: Any) -> int | None:
    """The index of the top-level statement holding ``src``'s line (past the end for a
    definition: what it holds runs when it is called)."""
    line = getattr(src, "line", None)
    for index, (start, end, defines) in enumerate(tops):
        if isinstance(line, int) and start <= line <= end:
            return len(tops) if defines else index
    return None


def _frameworks(module: Module, readers: list[Any], text: str,
                ) -> tuple[str | None, ReaderOutput]:
    """What every framework of ``readers`` whose words ``module`` holds reads in it."""
    from preflight.frameworks import FRAMEWORKS

    facts: dict[str, Any] = {}
    prov: dict[str, str] = {}
    problems: list[ConfigProblem] = []
    linked: list[Linked] = []
    for fw in readers:
        if fw.python_hint is not None and not fw.python_hint.search(text):
            continue
        assert fw.read_python is not None
        out = fw.read_python(module)
        for name, value in out.facts.items():
            facts.setdefault(name, value)
            prov.setdefault(name, out.provenance.get(name, module.path))
        problems.extend(out.problems)
        linked.extend(out.linked)
    present = _present(facts)
    got = next((f.kind for f in FRAMEWORKS if f.kind in present), None)
    return got, ReaderOutput(facts, prov, tuple(problems), tuple(linked))


def _present(facts: Mapping[str, Any]) -> set[str]:
    """The kinds whose settings ``facts`` hold, less one whose settings another framework's
    reader states for it (``config.megatron.args_of``: a NeMo 2 script's CUDA-graph fields are
    Megatron-Core's, the script is NeMo 2's), as jobs/walk.py leaves it out of config.kinds."""
    return {k for n in facts if n.count(".") >= 2 and
            f"config.{(k := n.split('.', 2)[1])}.args_of" not in facts}


def peek(path: str, kind: str | None, argv: tuple[str, ...] | None,
         environ: Given | None = None, syspath: str | None = None,
         errors: list[ParseError] | None = None) -> tuple[str | None, ReaderOutput]:
    """:func:`read` for a script a launch line runs, None when nothing in it is read (why it
    could not be read, where it could not: appended to ``errors``)."""
    try:
        return read(path, kind, False, argv, environ=None if environ is None else
                    {n: (v, w) for n, v, w in environ}, syspath=syspath)
    except ParseError as exc:
        if errors is not None:
            errors.append(exc)
        return None, ReaderOutput()
    except RecursionError:
        return None, ReaderOutput()


def by_hand(module: Module) -> ConfigProblem:
    """The note for a script read as run without arguments (:attr:`.pysource.Module.by_hand`):
    which options took their defaults (jobs/walk.py drops it where a job script runs the file)."""
    used = sorted(module.defaulted.items(), key=lambda kv: kv[1])
    names = ", ".join(n for n, _ in used[:6]) + (" ..." if len(used) > 6 else "")
    return ConfigProblem(module.path, used[0][1], (
        f"read as run without arguments: {names} {'is' if len(used) == 1 else 'are'} the "
        "script's own default (argparse), since no launch line read here runs it; arguments "
        "given when it is run are not checked"), level="info", code="runtime_args", fix=(
        "Check the launch as you run it: name the launch script (`fp8-doctor check run.sh`) "
        "or a file holding the command line, which fp8-doctor reads with its arguments"))


def _module(path: str, text: str, argv: tuple[str, ...] | None, entry: str | None,
            environ: Environ | None, alone: bool = False) -> Module:
    """The parsed file, kept for the next read of the same text (a launch script peeks at the
    script it runs before the job reader reads it); ``alone``: the user named it (by hand)."""
    key = (path, hash(text), argv, entry,
           None if environ is None else tuple(sorted(environ.items())), SYS_PATH.get(), alone)
    if key not in _CACHE:
        if len(_CACHE) >= 8:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = Module(path, parse(path, text), argv, entry, environ=environ,
                             by_hand=alone)
        if imports_job_module(text, path):
            link(_CACHE[key])   # `from helpers import *`, values of the job's modules
    return _CACHE[key]


_CACHE: dict[tuple[Any, ...], Module] = {}


NOTHING_FIX = ("If the job sets its precision elsewhere, name that file (the launch script, the "
               "config it passes); if this script builds it in a way the text does not show, "
               "check at run time with the callback (preflight.integrations.hf / .lightning).")


def nothing_found(readers: list[Any]) -> str:
    """The message for a Python file with no call any reader knows."""
    return ("no setting of a framework fp8-doctor reads was found in this Python file (looked "
            f"for {', '.join(f.title for f in readers)} calls); FP8 is not judged from it. The "
            "file itself may be fine: it was parsed, not run")


__all__ = ["MAX_BYTES", "read"]
