"""The shell scripts a launch script runs or sources (:mod:`preflight.reading.shellcalls`),
found inside the job and linked with what each starts with, for :func:`.scripts.read`; a wrapper
no framework reads takes the kind of the first one a framework reads (peeked, bounded). Moved out
of jobs/scripts.py (400 lines) when sourced scripts' launches joined them (shdir, issue 21)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace

from preflight.findings import Source
from preflight.jobs import scriptargs
from preflight.reading import launchroot, shellcalls, shellpwd, shellreach
from preflight.reading.boundary import outside_reference, refuse
from preflight.reading.parse import ParseError, read_text
from preflight.reading.shelldir import RUNS, settle
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

_PEEKING: ContextVar[int] = ContextVar("fp8_doctor_called_script_depth", default=0)
MAX_CALL_DEPTH = 3
"""Scripts calling scripts followed this deep to learn a wrapper's kind (a cycle stops too)."""
MAX_PEEKS = 4
"""Scripts of one wrapper looked into for its kind: 4**3 reads at most, whatever the fan-out."""
_PEEKED: ContextVar[dict[tuple[object, ...], tuple[str | None, ReaderOutput]] | None] = \
    ContextVar("fp8_doctor_peeked_scripts", default=None)
"""What each peek of one wrapper found, by (script, kind, what it inherits, depth): scripts that
run or source each other were read again on every path to them, 84 reads per wrapper of the
same few files (redteam15: 200 files sourcing each other, each read walking 200 ``source``
lines: over a minute). The same read at the same depth gives the same answer; one check shares
it (:func:`per_check`), else one wrapper."""


@contextmanager
def per_check() -> Iterator[None]:
    """Peeks shared by every wrapper of one check (:func:`.read.read_paths`)."""
    token = _PEEKED.set({})
    try:
        yield
    finally:
        _PEEKED.reset(token)


def shell_scripts(path: str, text: str, outer: dict[str, str],
                   walked: shellcalls.Walked, problems: list[ConfigProblem]) -> list[Linked]:
    """The shell scripts ``text`` runs (``VAR=v bash x.sh``, ``sbatch x.sh``, ``./x.sh``:
    :mod:`.shellcalls`), found inside the job, each linked with the environment and folder it
    starts with, so its ``${VAR:-default}`` takes the caller's value. A relative path is
    taken from the folder the command runs in (after a ``cd``); one that cannot be known (a
    ``cd`` to a run-time folder) is not guessed at; one found only outside the job is a
    warning at its line (:mod:`.boundary`), never read."""
    from preflight.jobs import scripts

    found: list[Linked] = []
    me = os.path.realpath(path)
    # a run bash never makes (in a function the script never calls, after its `exit`) is no
    # run: `f() { PR=fp8 bash s.sh; }` beside `bash s.sh` is one BF16 run, not two that differ
    # (session 43's multi-launch policy would read it FP8); a sourced script's functions may
    # be called by the script that sources it
    never = shellreach.unreached(text) if RUNS not in outer else (lambda offset: None)
    for call in walked.calls:
        if never(call.offset) is not None:
            continue
        line = text.count("\n", 0, call.offset) + 1
        folder, _ = shellcalls.folder_of(call.folder, path, outer)
        script = settle(call.script, path, path)
        if os.path.isabs(script):
            cands = [script]
        elif folder is None:
            continue                     # `cd $(...)` before it: which file runs is not known
        else:
            cands = [os.path.join(folder, script)]
            if shellcalls.CWD not in outer and not call.folder.path:
                cands.append(script)     # launched from the current directory (as refs do)
        hits = [os.path.normpath(c) for c in cands if os.path.isfile(c)]
        if not hits and not os.path.isabs(script) and shellcalls.CWD not in outer and \
                not call.folder.path and not any(os.path.lexists(c) for c in cands):
            hits = _from_above(script, path, line, call.how, problems)
        odd = next((c for c in cands if os.path.lexists(c) and not os.path.isfile(c)), None)
        if not hits and odd is not None and refuse(odd):
            if call.how != "source":
                outside_reference(odd, path, line, "runs")     # a link out of the job (/dev/zero)
        elif not hits and odd is not None and len(problems) < 64:
            # a FIFO, a device (a link to /dev/zero) or a folder: nothing to read (redteam3)
            problems.append(_unread_call(path, line, call.script, "is not a regular file "
                                         "(a FIFO, device or folder)"))
        if not hits or os.path.realpath(hits[0]) == me:
            continue
        if refuse(hits[0]):
            if call.how != "source":         # (jobs/sourcing.py says it for a sourced one)
                outside_reference(hits[0], path, line, "runs")
            continue
        try:
            head = read_text(hits[0])[:4096]
        except (ParseError, OSError) as exc:
            # never linked, so no reader would report it: said here, at the calling line
            if len(problems) < 64:
                problems.append(_unread_call(path, line, call.script, "could not be read (" + (
                    exc.message if isinstance(exc, ParseError) else type(exc).__name__)[:120]
                    + ")"))
            continue
        if not scripts.is_shell(hits[0], head):
            continue
        env = dict(call.env)
        env[shellcalls.ENVIRON] = ",".join(n for n, _ in call.env)
        env[shellcalls.CALLER] = Source(path, line)
        if call.argv or call.how != "source":   # `source x.sh`: the caller's own "$@"
            env[scriptargs.ARGV] = scriptargs.encode(call.argv)
        if folder is not None:
            env[shellcalls.CWD] = folder
        found.append(Linked(hits[0], "", Source(path, line), key="the launch line",
                            line=line, optional=True, variables=tuple(env.items())))
        if walked.assumed is not None and walked.assumed <= call.offset and len(problems) < 64:
            at = text.count("\n", 0, walked.assumed) + 1      # (said once: then no more)
            start, paths = walked.start or (os.path.dirname(os.path.abspath(path)), ())
            problems.append(ConfigProblem(path, at, shellpwd.assumed_note(path, at, start, paths),
                                          level="info", code="assumed_folder"))
            walked = replace(walked, assumed=None)
    return found


def _from_above(script: str, path: str, line: int, how: str,
                problems: list[ConfigProblem]) -> list[str]:
    """The one folder above ``path`` holding ``script`` (a path from the repository's top:
    :mod:`preflight.reading.launchroot`); two such folders are a warning naming both."""
    found = launchroot.find(script, path)
    said = found.problem(path, line, "runs", script)
    if said is not None and how != "source" and len(problems) < 64:
        problems.append(said)
    return [found.path] if found.path is not None else []


def sourced_calls(files: list[str], path: str, own: dict[str, str],
                   walked: shellcalls.Walked | None, calls: list[Linked]) -> list[Linked]:
    """The scripts ``path`` sources, as scripts it runs (redteam8: ``source train.sh --fp8``
    whose ``torchrun ... "$1"`` was never read, FP8 "no"): read for their launch with the
    framework that reads it, with the sourcing script's variables and the words given (a
    file a ``source`` command already links as a call is not linked twice)."""
    linked = {os.path.realpath(c.path) for c in calls}
    return [link for link in scriptargs.sourced_links(files, "", path, own, walked)
            if os.path.realpath(link.path) not in linked]


def _unread_call(path: str, line: int, script: str, why: str) -> ConfigProblem:
    return ConfigProblem(path, line, (
        f"runs {script[:120]!r}, which {why}: the settings it gives the job were not read"),
        level="warning", code="reference")


def _peek(memo: dict[tuple[object, ...], tuple[str | None, ReaderOutput]] | None, link: Linked,
          kind: str | None, depth: int) -> tuple[str | None, ReaderOutput]:
    """``read_file`` of a script a wrapper runs, once per (script, kind, inherited, depth)."""
    from preflight.jobs.read import read_file

    inherited = dict(link.variables)
    key = (os.path.realpath(link.path), kind, depth, repr(sorted(inherited.items())))
    if memo is None or key not in memo:
        got = read_file(link.path, kind, explicit=False, inherited=inherited)
        if memo is None:
            return got
        memo[key] = got
    return memo[key]


def with_calls(got: str | None, out: ReaderOutput, calls: list[Linked], kind: str | None,
                unread: list[ConfigProblem]) -> tuple[str | None, ReaderOutput]:
    """``out`` naming the scripts it runs too; a wrapper read by no framework takes the kind
    of the first script it runs that one reads (``VAR=v bash run_grpo.sh``)."""
    if got is None:
        depth = _PEEKING.get()
        if depth >= MAX_CALL_DEPTH:
            return None, out
        token = _PEEKING.set(depth + 1)
        memo = _PEEKED.get()
        top = _PEEKED.set({}) if memo is None else None
        memo = _PEEKED.get()
        try:
            for link in calls[:MAX_PEEKS]:
                peek, peeked = _peek(memo, link, kind, depth)
                if peek is not None:
                    got = peek
                    break
                bad = next((p for p in peeked.problems if p.level == "error"), None)
                if bad is not None and link.line is not None:
                    # not UTF-8, NUL bytes, ...: the script it runs holds the launch, perhaps
                    caller = getattr(link.source, "path", str(link.source))
                    unread.append(_unread_call(caller, link.line, os.path.basename(link.path),
                                               f"could not be read ({bad.message[:120]})"))
        finally:
            _PEEKING.reset(token)
            if top is not None:
                _PEEKED.reset(top)
        if got is None:
            return None, out
    named_already = {os.path.realpath(link.path) for link in out.linked}
    extra = tuple(c for c in calls if os.path.realpath(c.path) not in named_already)
    return got, replace(out, linked=(*out.linked, *extra))
