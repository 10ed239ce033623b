"""A shell script of the job read with the arguments the script that runs it gives (``bash
recipe.sh a.b=c``, ``source env.sh a b``): :func:`read` wraps :func:`.scripts.read`, binding
them (:mod:`preflight.reading.shellbind`) and putting every location back where its line comes
from (the caller's ``file:line`` for the words it wrote).

A script several commands run with different arguments is read once per command, and a
setting they give differently is Unknown naming them (:func:`.launchpick.merged`, as a script's
own launch lines); one whose arguments are not known at all (past the bounds of
:mod:`.shellargs`) adds a cut at its first use of them, so FP8 "no" is not stated. A script no
script of the job runs (run by hand) whose training command passes ``"$@"`` is read as it is,
with an info note at that line (FP8D-CFG-RUNTIME-ARGS): what the user adds when running it is
not known here, and no finding should look as if it had been checked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import replace

from preflight.base.digits import ascii_digits
from preflight.jobs import fp8asks
from preflight.reading import launchpick, shellargvset, shellbind, shelldefaults
from preflight.reading.parse import ParseError
from preflight.reading.shellargs import ARGV, PARAMS, calls, encode, run_env
from preflight.reading.shellcalls import Walked
from preflight.reading.shellexpand import TooLarge, launches, split_text
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

__all__ = ["ARGV", "encode", "read", "sourced_links"]

Read = Callable[[str, str, str | None, bool, "dict[str, str] | None"],
                "tuple[str | None, ReaderOutput]"]


def read(reader: Read, path: str, text: str, kind: str | None, explicit: bool,
         inherited: dict[str, str] | None) -> tuple[str | None, ReaderOutput] | None:
    """``reader`` on ``text`` with the arguments ``inherited`` gives; None: none to bind (read
    it as it is)."""
    from preflight.jobs.scripts import is_shell

    argv = (inherited or {}).get(ARGV) if inherited else None
    if argv is None and not _BY_HAND.get() and PARAMS not in (inherited or {}) and \
            is_shell(path, text) and (loops := shellargvset.written_in(
                shellbind.Bound(text, ""), text, None)).notes:
        return _loops_by_hand(reader, path, text, kind, explicit, inherited, loops)
    if argv is None and not _BY_HAND.get() and is_shell(path, text) and \
            (at := runtime_args(text)) is not None:
        # run by hand (no script of the job gives it arguments): read as it is, and say what
        # was not (jobs/walk.py drops the note where a caller is found later)
        token = _BY_HAND.set(True)
        try:
            got, out = reader(path, text, kind, explicit, inherited)
        finally:
            _BY_HAND.reset(token)
        if got is None:
            return got, out
        line, entry = at
        return got, replace(out, problems=(*out.problems, ConfigProblem(path, line, (
            f"arguments added at run time are not checked: \"$@\" passes the arguments this "
            f"script is run with to {entry[:80]}, and no script read here gives it any, so FP8 "
            "or framework settings given there were not read"), level="info",
            code="runtime_args", fix=(
                "Check the launch as you run it: name a script that calls this one with its "
                "arguments (`bash run.sh trainer.x=y`), which fp8-doctor reads bound to them"))))
    if argv is None and not _BY_HAND.get() and PARAMS not in (inherited or {}) and \
            is_shell(path, text) and (used := shelldefaults.defaults_only(text)):
        return _as_shipped(reader, path, text, kind, explicit, inherited, used)
    if argv is None or PARAMS in (inherited or {}) or not is_shell(path, text):
        return None
    # ($1..$9 a sourcing script's own readers saw are not this script's: bound again below)
    inherited = {k: v for k, v in (inherited or {}).items() if not ascii_digits(k)}
    runs = calls(argv)
    if runs:
        # (each run with its own environment: `PR=fp8 bash s.sh` is not `bash s.sh`)
        envs = [run_env(inherited, one) for one, _ in runs]
        outs = [read(reader, path, text, kind, explicit, env)
                or reader(path, text, kind, explicit, {**env, ARGV: argv}) for env in envs]
        got = next((g for g, _ in outs if g is not None), None)
        return got, launchpick.merged([o for _, o in outs], ", ".join(w for _, w in runs),
                                      fp8asks.asks)
    bound = shellbind.bind(text, argv)
    if bound is None:
        return None
    try:
        got, out = reader(path, bound.text, kind, explicit, {
            **inherited, **shellbind.positional(text, argv), PARAMS: bound.params})
    except ParseError as exc:
        exc.line = shellbind.line_of(bound, exc.line)   # the script's own line, if it is one
        raise
    out = replace(out, problems=(*out.problems, *_notes(path, bound)))
    unknown = shellbind.unknown_args(path, text, argv)
    if unknown is None and bound.lost:      # redteam8: a caller's words moved by what is unknown
        line, why = bound.lost[0]
        unknown = ConfigProblem(path, line, (
            f"passes on its arguments, which are not known here: {why[:300]}; what they set "
            "was not read"), level="warning", cut=True)
    if unknown is not None and got is not None:
        out = replace(out, problems=(*out.problems, unknown))
    return got, shellbind.remapped(out, path, bound)


def _loops_by_hand(reader: Read, path: str, text: str, kind: str | None, explicit: bool,
                   inherited: dict[str, str] | None, bound: shellbind.Bound,
                   ) -> tuple[str | None, ReaderOutput]:
    """A script no script of the job runs that sets variables from its own arguments
    (:mod:`.shellargvset`): what its loop may set is Unknown, never the default (the note is
    dropped where a caller is found, jobs/walk.py, which reads it bound to the caller's words)."""
    token = _BY_HAND.set(True)
    try:
        got, out = reader(path, bound.text, kind, explicit, inherited)
    finally:
        _BY_HAND.reset(token)
    out = shellbind.remapped(out, path, bound)
    return got, replace(out, problems=(*out.problems, *(replace(
        p, code="runtime_args", level="info" if got is None else p.level)
        for p in _notes(path, bound))))


def _notes(path: str, bound: shellbind.Bound) -> list[ConfigProblem]:
    """What the script's own argument loops set (:mod:`.shellargvset`), at each loop's line:
    a warning that stops FP8 "no" where what they set is not known."""
    return [ConfigProblem(path, n.line, n.message, level="warning" if n.cut else "info",
                          code="argv_set", cut=n.cut) for n in bound.notes]


def _as_shipped(reader: Read, path: str, text: str, kind: str | None, explicit: bool,
                inherited: dict[str, str] | None, used: list[str],
                ) -> tuple[str | None, ReaderOutput]:
    """A script no script of the job runs, every positional parameter of which has a default
    (:mod:`.shelldefaults`): read bound to no arguments, so each is the script's default, with
    the note naming that assumption (jobs/walk.py drops it where a caller is found)."""
    token = _BY_HAND.set(True)
    try:
        got = read(reader, path, text, kind, explicit, {**(inherited or {}), ARGV: encode([])})
    finally:
        _BY_HAND.reset(token)
    if got is None or got[0] is None:
        return got if got is not None else reader(path, text, kind, explicit, inherited)
    names = ", ".join(used[:6]) + (" ..." if len(used) > 6 else "")
    line = text.count("\n", 0, text.find("$" + "{" + used[0][1:])) + 1
    return got[0], replace(got[1], problems=(*got[1].problems, ConfigProblem(path, line, (
        f"read as run without arguments: {names} {'is' if len(used) == 1 else 'are'} the "
        "script's own default (${N:-default}), since no script read here runs it with "
        "arguments; arguments given when it is run are not checked"), level="info",
        code="runtime_args", fix=(
            "Check the launch as you run it: name a script that calls this one with its "
            "arguments (`bash run.sh a b`), which fp8-doctor reads bound to them"))))


_BY_HAND: ContextVar[bool] = ContextVar("fp8_doctor_script_by_hand", default=False)
_ENTRY = re.compile(r"(?:^|/)(?:python[0-9.]*|torchrun|deepspeed|accelerate|[\w.-]+-cli|axolotl|tune|"
                    r"cosmos-rl|ray|srun|composer|uv|colossalai)$|\.py$")
"""Words that start a training command (a ``.py`` or a launcher): the first one of a command
is where :func:`runtime_args` looks for ``"$@"`` after it."""


def runtime_args(text: str) -> tuple[int, str] | None:
    """(line, command word) of the first training command of ``text`` that passes ``"$@"`` /
    ``"$*"`` when nobody gives the script arguments (shargs binds them when a job script runs
    it, :func:`read`); None when none does or the script cannot be walked here."""
    try:
        found = launches(split_text(text), lambda w: _ENTRY.search(w) is not None, None, limit=8)
    except TooLarge:
        return None
    bodies = _functions(text)
    for lr in found:
        if lr.forwarded and not any(a <= lr.offset < b for a, b in bodies):
            # (in a function, "$@" is the function's arguments: not said, never guessed)
            words = [lr.entry.text, *(a.text for a in lr.args[:2])]
            entry = " ".join(words[:3]) if words[1:2] == ["-m"] else words[0]
            return text.count("\n", 0, lr.offset) + 1, entry
    return None


_FUNCTION = re.compile(r"(?m)^[ \t]*(?:function[ \t]+[\w-]+|[\w-]+[ \t]*\(\))[ \t]*\{?")


def _functions(text: str) -> list[tuple[int, int]]:
    """Rough extents of the script's function bodies (one line: to its last ``}``)."""
    spans = []
    for m in list(_FUNCTION.finditer(text))[:256]:
        end = text.find("\n", m.end())
        end = len(text) if end < 0 else end
        if "}" in text[m.end():end]:
            spans.append((m.start(), end))
            continue
        close = re.compile(r"(?m)^[ \t]*\}").search(text, m.end())
        spans.append((m.start(), close.end() if close else len(text)))
    return spans


def sourced_links(files: Sequence[str], kind: str, path: str, own: dict[str, str],
                  walked: Walked | None) -> tuple[Linked, ...]:
    """The scripts ``path`` sources (they belong to the job: read as ``kind`` if they hold any
    settings), each with its variables and its ``"$@"``: ``source env.sh a b`` gives a b,
    ``source env.sh`` the sourcing script's own (bash)."""
    own = {k: v for k, v in own.items() if k != PARAMS}
    given = {os.path.basename(c.script): c.argv for c in (walked.calls if walked else ())
             if c.how == "source" and c.argv}
    return tuple(Linked(f, kind, path, key="source", optional=True, variables=tuple({
        **own, **({ARGV: encode(given[os.path.basename(f)])}
                  if os.path.basename(f) in given else {})}.items())) for f in files)
