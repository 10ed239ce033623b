"""A shell script of the job read with the arguments the script that runs it gives (``bash
recipe.sh a.b=c``, ``source env.sh a b``): :func:`read` wraps :func:`.scripts.read`, binding
them (:mod:`preflight.reading.shellbind`) and putting every location back where its line comes
from (the caller's ``file:line`` for the words it wrote).

A script several commands run with different arguments is read once per command, and a
setting they give differently is Unknown naming them (:func:`.launchpick.merged`, as a script's
own launch lines); one whose arguments are not known at all (past the bounds of
:mod:`.shellargs`) adds a cut at its first use of them, so FP8 "no" is not stated.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace

from preflight.reading import launchpick, shellbind
from preflight.reading.parse import ParseError
from preflight.reading.shellargs import ARGV, PARAMS, calls, encode
from preflight.reading.shellcalls import Walked
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
    if argv is None or PARAMS in (inherited or {}) or not is_shell(path, text):
        return None
    # ($1..$9 a sourcing script's own readers saw are not this script's: bound again below)
    inherited = {k: v for k, v in (inherited or {}).items() if not k.isdigit()}
    runs = calls(argv)
    if runs:
        outs = [read(reader, path, text, kind, explicit, {**inherited, ARGV: one})
                or reader(path, text, kind, explicit, inherited) for one, _ in runs]
        got = next((g for g, _ in outs if g is not None), None)
        return got, launchpick.merged([o for _, o in outs], ", ".join(w for _, w in runs))
    bound = shellbind.bind(text, argv)
    if bound is None:
        return None
    try:
        got, out = reader(path, bound.text, kind, explicit, {
            **inherited, **shellbind.positional(text, argv), PARAMS: bound.params})
    except ParseError as exc:
        exc.line = shellbind.line_of(bound, exc.line)   # the script's own line, if it is one
        raise
    unknown = shellbind.unknown_args(path, text, argv)
    if unknown is None and bound.lost:      # redteam8: a caller's words moved by what is unknown
        line, why = bound.lost[0]
        unknown = ConfigProblem(path, line, (
            f"passes on its arguments, which are not known here: {why[:300]}; what they set "
            "was not read"), level="warning", cut=True)
    if unknown is not None and got is not None:
        out = replace(out, problems=(*out.problems, unknown))
    return got, shellbind.remapped(out, path, bound)


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
