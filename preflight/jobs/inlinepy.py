"""Inline Python programs of a launch script (:mod:`preflight.reading.launchinline`: ``python -c
'...'``, ``python - <<EOF``) read as virtual scripts of that shell file.

Each program is read by the Python readers (:mod:`.pyjob`: parsed, never run) from a text kept
for this check only (:mod:`preflight.reading.textcache`) under a name beside the shell file that
no reader opens from disk; the text is padded with blank lines so that its lines are the shell
file's, and every place the read names (facts' provenance, problems) is then put back on the
shell file: ``verify_te.sh:21``, not the virtual name. One not read (a run-time program, past
the size cap) is a warning at its line; several programs are several runs of Python (a
verification step, then the training): a setting they give differently is Unknown naming both
lines, as two launch lines are (:mod:`preflight.reading.launchpick`).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading import textcache
from preflight.reading.launchinline import programs
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

MAX_PROBLEMS = 16


def read(path: str, text: str, raw: str, outer: dict[str, str], kind: str | None,
         environ: Any) -> tuple[str | None, ReaderOutput, list[ConfigProblem]]:
    """(kind, facts, why some were not read) of the inline programs of the shell file
    ``path`` (``text``: its commands, here-document bodies blanked; ``raw``: as written);
    ``environ(offset)``: the environment the command there gives Python; ``text`` empty for
    a file that is no shell script."""
    from preflight.jobs.read import read_file

    got: str | None = None
    facts: dict[str, Any] = {}
    prov: dict[str, Any] = {}
    seen: dict[str, tuple[Any, int]] = {}
    problems: list[ConfigProblem] = []
    unread: list[ConfigProblem] = []
    linked: list[Linked] = []
    for n, prog in enumerate(programs(text, raw, outer) if text else ()):
        if prog.text is None:
            if len(unread) < MAX_PROBLEMS:
                unread.append(ConfigProblem(path, prog.line, prog.why + "; what it sets was "
                                            "not read", level="warning", code="reference"))
            continue
        virtual = os.path.join(os.path.dirname(os.path.abspath(path)),
                               f".{os.path.basename(path)}.inline-{n}-line-{prog.line}.py")
        padded = "\n" * (prog.line - 1) + prog.text
        if textcache.put(virtual, padded) is not padded or textcache.get(virtual) != padded:
            unread.append(ConfigProblem(path, prog.line, (
                "the inline Python program here was not read (no room kept for its text in "
                "this check)"), level="warning", code="reference"))
            continue
        given = environ(prog.offset)
        env = None if given is None else {name: (v, w) for name, v, w in given}
        k, out = read_file(virtual, kind, explicit=False, argv=prog.argv, environ=env)
        out = _on_shell(out, virtual, path, None if prog.exact else prog.line)
        problems.extend(out.problems[:MAX_PROBLEMS])
        linked.extend(out.linked)
        if k is None:
            continue
        got = got or k
        for name, value in out.facts.items():
            where = out.provenance.get(name, Source(path, prog.line))
            if name not in seen:
                seen[name] = (value, prog.line)
                facts[name], prov[name] = value, where
            elif seen[name][0] != value and not isinstance(facts[name], Unknown):
                facts[name] = Unknown(
                    f"the inline programs at lines {seen[name][1]} and {prog.line} of "
                    f"{os.path.basename(path)} set it differently ({str(seen[name][0])[:60]} / "
                    f"{str(value)[:60]}): which run is the job's is not known")
    return got, ReaderOutput(facts, prov, tuple(problems), tuple(linked)), unread


def _on_shell(out: ReaderOutput, virtual: str, path: str, line: int | None = None,
              ) -> ReaderOutput:
    """``out`` with every place in the virtual script put on the shell file (same lines; all on
    ``line`` when the program's lines are not the file's: ``$'a\\nb'``)."""
    def moved(where: Any) -> Any:
        if isinstance(where, Source) and where.path == virtual:
            return Source(path, where.line if line is None else line)
        if isinstance(where, str) and where.startswith(virtual):
            return path + (where[len(virtual):] if line is None else f":{line}")
        return where

    prov = {n: moved(w) for n, w in out.provenance.items()}
    problems = tuple(replace(p, path=path, line=p.line if line is None else line)
                     if p.path == virtual else p for p in out.problems)
    linked = tuple(replace(link, source=moved(link.source)) for link in out.linked
                   if link.path != virtual)
    return ReaderOutput(out.facts, prov, problems, linked)


def merged(got: str | None, out: ReaderOutput, kind: str | None, inline: ReaderOutput,
           ) -> tuple[str | None, ReaderOutput]:
    """The shell file's own reading with its inline programs' (its own settings win)."""
    if kind is None:
        return got, out
    return got or kind, ReaderOutput({**inline.facts, **out.facts},
                                     {**inline.provenance, **out.provenance},
                                     (*out.problems, *inline.problems),
                                     (*out.linked, *inline.linked))
