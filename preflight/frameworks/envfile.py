"""The variables ``uv run --env-file F`` gives the command it runs, read from F as a dotenv file
when F is inside the job (outside it: Unknown with a reason, never opened).

uv (crates/uv/src/commands/project/run.rs at astral-sh/uv 0022eda9) loads each ``--env-file``
(also ``UV_ENV_FILE``; none with ``--no-env-file``) with ``dotenvy::from_path``, in reverse
order: a variable already in the environment is never overridden, and of two files the later
one wins. dotenvy's syntax: ``KEY=value`` lines, an optional ``export`` before the key, ``#``
comments (a whole line, or after an unquoted value's space), single quotes literal, double
quotes with backslash escapes and ``$VAR`` / ``${VAR}`` substitution, unquoted values with
substitution too; a line it cannot parse stops the file there (uv warns and runs on). No
command is ever run (dotenv has no ``$(...)``). A substituted value is Unknown here (the
environment it reads from is the run's).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading.parse import ParseError
from preflight.reading.parse import read_text as read_text_file
from preflight.reading.refs import locate, outside, under_roots
from preflight.reading.shelltypes import Arg

MAX_VARS = 200
"""Variables kept from one env file (a real one sets a few)."""
_LINE = re.compile(r"[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.]*)[ \t]*=[ \t]*(.*)\Z", re.S)


@dataclass(frozen=True)
class EnvFile:
    """What the env files of one ``uv run`` set: ``values`` (name -> value or Unknown, where);
    ``unread``: why a file named was not read (then any variable may come from it)."""

    values: dict[str, tuple[str | Unknown, Source]]
    unread: tuple[tuple[Unknown, Source], ...] = ()


def files_named(before: Sequence[Arg]) -> list[Arg] | None:
    """The ``--env-file`` arguments of a ``uv run`` among the words before the entry point, in
    order (none with ``--no-env-file``); None when there is no ``uv run`` there."""
    texts = [a.text for a in before]
    at = next((i for i in range(len(texts) - 1)
               if texts[i].rsplit("/", 1)[-1] == "uv" and texts[i + 1] == "run"), None)
    if at is None:
        return None
    if "--no-env-file" in texts[at:]:
        return []
    out: list[Arg] = []
    for i in range(at + 2, len(texts)):
        if texts[i] == "--":
            break
        if texts[i] == "--env-file" and i + 1 < len(before):
            out.append(before[i + 1])
        elif texts[i].startswith("--env-file="):
            arg = before[i]
            out.append(Arg(arg.text.split("=", 1)[1], arg.offset, arg.opaque, arg.conditional))
    return out


def read_files(names: Sequence[Arg], script: str, text: str) -> EnvFile:
    """The variables the env files ``names`` (found next to ``script``, in the current
    directory or from the job's roots) set, later files first as uv loads them."""
    values: dict[str, tuple[str | Unknown, Source]] = {}
    unread: list[tuple[Unknown, Source]] = []
    for arg in reversed(names):
        at = Source(script, text.count("\n", 0, arg.offset) + 1)
        if arg.opaque is not None:
            unread.append((Unknown(f"uv --env-file {arg.text[:80]!r}: the file name is known "
                                   f"only when the script runs ({arg.opaque})"), at))
            continue
        found = locate(arg.text, script) or under_roots(arg.text)
        if found is None:
            away = outside(arg.text, script)
            unread.append((Unknown(
                f"uv --env-file {arg.text[:80]!r} is outside the job ({away}); not read" if away
                else f"uv --env-file {arg.text[:80]!r} is not in the job; not read"), at))
            continue
        try:
            body = read_text_file(found)
        except ParseError as exc:
            unread.append((Unknown(f"uv --env-file {arg.text[:80]!r} was not read: {exc}"), at))
            continue
        for name, value, line in parse(body, found):
            values.setdefault(name, (value, Source(found, line)))   # dotenvy: no override
    return EnvFile(values, tuple(unread))


def parse(text: str, path: str) -> list[tuple[str, str | Unknown, int]]:
    """``(name, value, line)`` for each assignment of a dotenv text, as dotenvy reads it (a
    line it cannot parse ends the file: the rest is not set)."""
    out: list[tuple[str, str | Unknown, int]] = []
    lines = text.replace("\r\n", "\n").split("\n")
    n = 0
    while n < len(lines) and len(out) < MAX_VARS:
        raw = lines[n]
        n += 1
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        hit = _LINE.match(raw)
        if hit is None:
            break                               # dotenvy: LineParse error, uv stops here
        name, rest, line = hit.group(1), hit.group(2), n
        if rest[:1] in ("'", '"') and rest.count(rest[0]) - rest.count("\\" + rest[0]) < 2:
            # a quoted value may run over lines until its closing quote
            while n < len(lines) and rest[0] not in lines[n]:
                rest += "\n" + lines[n]
                n += 1
            if n < len(lines):
                rest += "\n" + lines[n]
                n += 1
        value = _value(rest, name, path, line)
        if value is None:
            break
        out.append((name, value, line))
    return out


def _value(rest: str, name: str, path: str, line: int) -> str | Unknown | None:
    """One value: quotes removed, a substitution left Unknown; None when dotenvy would refuse
    it (an unclosed quote)."""
    if rest[:1] == "'":
        end = rest.find("'", 1)
        return rest[1:end] if end > 0 else None
    if rest[:1] == '"':
        m = re.match(r'"((?:[^"\\]|\\.)*)"', rest, re.S)
        if m is None:
            return None
        body = m.group(1)
        if re.search(r"(?<!\\)\$", body):
            return _substituted(name, path, line)
        return re.sub(r"\\(.)", lambda e: {"n": "\n", "t": "\t"}.get(e.group(1), e.group(1)),
                      body)
    value = re.split(r"[ \t]#", rest, maxsplit=1)[0].strip()
    if "$" in value:
        return _substituted(name, path, line)
    return value


def _substituted(name: str, path: str, line: int) -> Unknown:
    return Unknown(f"{name} in {path}:{line} substitutes a variable ($VAR): its value comes "
                   "from the environment uv runs in, known only when the job runs")
