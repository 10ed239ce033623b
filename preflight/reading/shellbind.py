"""A called script's text with the arguments its caller gives bound (:mod:`.shellargs`), for
every reader of its launch lines, and each location read in it put back where it is written.

Two readers of a launch line see the arguments differently. Those that walk the script with
the shell kit (:mod:`.shellexpand`: the override readers of verl, NeMo-RL, Megatron-Bridge ...)
expand ``"$@"``, ``$1``, ``shift`` as the shell does, from :data:`.shellargs.PARAMS`: the words
sit in a comment block appended to the text, one line each (no reader takes a comment for a
command). Those that read the text of one command line (``accelerate launch`` options, Megatron
``--flags``, ``torchrun --nproc_per_node``, a Python script's ``argv``) never expand ``"$@"``:
for them each whole-word ``"$@"`` / ``$@`` / ``$*`` of a command the walk reaches is written
out in place, one quoted word per ``\\``-continued line (only where every word is known and
none holds a newline; a ``shift`` or ``set --`` before it is applied).

Each line of the bound text comes from somewhere (:attr:`Bound.origin`): a line of the script
(its number moves when words are written in above it) or a caller's ``file:line``;
:func:`remapped` puts every provenance, problem and named file's location back there.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, replace

from preflight.base.digits import ascii_int
from preflight.findings import Source
from preflight.reading import shellargvset
from preflight.reading.shellargs import ARGV, MAX_WORDS, PARAMS, Params, decode, encode, moved
from preflight.reading.shelltypes import Field
from preflight.reading.shellvars import COUNT, runtime, strip_comments
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput

MAX_WRITTEN = 16
"""``"$@"`` written out in one script (a real one forwards once or twice)."""

_WHOLE = re.compile(r'"\$(?:[@]|\{@(?::\d{1,6}(?::\d{1,6})?)?\})"|'
                    r'\$(?:[@*]|\{[@*](?::\d{1,6}(?::\d{1,6})?)?\})')
_END = set(" \t\n;&|)<>")


@dataclass(frozen=True)
class Bound:
    """A called script's text with its arguments bound (:func:`bind`)."""

    text: str
    params: str                            # the evaluator's PARAMS value
    origin: tuple[int | str, ...] = ()     # per line of ``text``: the script's line, or where
    lost: tuple[tuple[int, str], ...] = ()  # (script line, why) of a "$@" not written out: a
    # `shift` / `set` the text does not decide moved the caller's words (redteam8)
    notes: tuple[shellargvset.Note, ...] = ()   # what the script's own argument loops set

    def where(self, line: int | None) -> int | str | None:
        """Where line ``line`` of :attr:`text` comes from (None: not known)."""
        if line is None or not 1 <= line <= len(self.origin):
            return None
        return self.origin[line - 1]


def bind(text: str, argv: str | None) -> Bound | None:
    """``text`` with the arguments :data:`.shellargs.ARGV` gives (None: no caller gives any)."""
    words = decode(argv)
    if words is None:
        return None
    if isinstance(words, str):
        return shellargvset.written_in(Bound(text, json.dumps({"unknown": words})), text, words)
    body = text if text.endswith("\n") or not text else text + "\n"
    # where each word is, while the script is walked to find the "$@" to write out: -1, -2 ...
    provisional = json.dumps([[w.text, -n, w.opaque, w.loose, str(w.where)]
                              for n, w in enumerate(words, 1)])
    origin: list[int | str] = []
    out: list[str] = []
    cur: int | str = 1          # where the output line being written comes from
    orig = 1                    # the script's line at ``last``
    last = 0

    def copy(seg: str) -> None:
        nonlocal cur, orig
        for _ in range(seg.count("\n")):
            origin.append(cur)
            orig += 1
            cur = orig
        out.append(seg)

    lost: list[tuple[int, str]] = []
    for start, end, items in _written(body, provisional, lost):
        copy(body[last:start])
        for word, where in items:
            out.append("\\\n")
            origin.append(cur)
            cur = where
            out.append(shlex.quote(word) + " ")
        if items:
            out.append("\\\n")
            origin.append(cur)
            cur = orig
        last = end
    copy(body[last:])
    bound = "".join(out)
    params = []
    at = len(bound)
    block = []
    for n, w in enumerate(words, 1):
        item = f"# fp8-doctor: argument {n} of the command that runs this script\n"
        params.append([w.text, at, w.opaque, w.loose, str(w.where)])
        block.append(item)
        origin.append(str(w.where))
        at += len(item)
    return shellargvset.written_in(Bound(bound + "".join(block), json.dumps(params), tuple(origin),
                                         tuple(lost)), text, words)


def _written(text: str, params: str, lost: list[tuple[int, str]],
             ) -> list[tuple[int, int, list[tuple[str, int | str]]]]:
    """(start, end, words) of each whole-word ``"$@"`` / ``$@`` / ``$*`` in a command the walk
    reaches, whose words are all known and printable on one line; ``lost`` gets those whose
    words a ``shift`` / ``set`` moved by what the text does not decide."""
    from preflight.reading.shellexpand import Eval, TooLarge, _split
    from preflight.reading.shellwords import split

    words = split(text)
    ev = Eval({PARAMS: params})
    ev.prepare(words)
    found: list[tuple[int, int, list[tuple[str, int | str]]]] = []
    try:
        for st in words.statements:
            if len(found) >= MAX_WRITTEN:
                break
            if ev.step(st) is None:
                continue
            for word in st.words[1:]:
                held = ev.params_at(word[0].offset)
                if len(word) != 1 or word[0].param not in ("@", "*") or held is None:
                    continue
                got = _one(text, word[0].offset, word[0].quoted)
                value = held.expand(word[0], st.branch, False, lambda o: o)
                if got is None or value is None:
                    continue
                items = [f for v in value for f in ([v] if word[0].quoted else _split(v))]
                why = next((s.opaque for f in items for s in f if s.opaque and moved(s.opaque)),
                           None)
                if why is not None and len(lost) < 8:
                    lost.append((text.count("\n", 0, word[0].offset) + 1, why))
                if any(s.opaque or "\n" in s.text or "\x00" in s.text for f in items
                       for s in f):
                    continue
                found.append((*got, [("".join(s.text for s in f), _where(f, ev.params, text))
                                     for f in items][:MAX_WORDS]))
    except TooLarge:
        return found
    return found


def _where(field: Field, params: Params, text: str) -> int | str:
    at = next((s.offset for s in field), 0)
    return params.at.get(at) or text.count("\n", 0, at) + 1


def _one(text: str, at: int, quoted: bool) -> tuple[int, int] | None:
    """The extent of the whole word ``"$@"`` (``$@``, ``$*``) whose ``$`` is at ``at``."""
    start = at - 1 if quoted else at
    m = _WHOLE.match(text, start)
    if m is None or (m.group(0).startswith('"') != quoted):
        return None
    if start > 0 and text[start - 1] not in " \t\n;&|(":
        return None
    if m.end() < len(text) and text[m.end()] not in _END:
        return None
    return start, m.end()


def _moved(source: str, path: str, bound: Bound) -> str:
    """``source`` (a ``file:line`` of the bound text) where that line comes from."""
    if isinstance(source, Source):
        if source.path != path:
            return source
        line = source.line
    else:
        m = re.fullmatch(r"(.*):(\d+)", str(source))
        if m is None or m.group(1) != path:
            return source
        line = int(m.group(2))
    got = bound.where(line)
    if got is None or got == line:
        return source
    if isinstance(got, int):
        return Source(path, got)
    gpath, _, gline = got.rpartition(":")
    number = ascii_int(gline)
    return Source(gpath, number) if number is not None and gpath else Source(got)


def remapped(out: ReaderOutput, path: str, bound: Bound) -> ReaderOutput:
    """``out`` (read from ``bound.text``) with every location put where its line comes from
    (the script's own line, or the caller's ``file:line``): provenance, problems, named files."""
    if not bound.origin:
        return out

    def problem(p: ConfigProblem) -> ConfigProblem:
        if p.path != path or p.line is None:
            return p
        moved = _moved(Source(path, p.line), path, bound)
        return replace(p, path=getattr(moved, "path", p.path), line=getattr(moved, "line", None))

    def link(k: Linked) -> Linked:
        moved = _moved(k.source, path, bound)
        if moved is not k.source:
            k = replace(k, source=moved, line=getattr(moved, "line", k.line))
        if not any(n == ARGV for n, _ in k.variables):
            return k
        # a script this one runs with words of its own caller (`bash b.sh "$@"`): where each
        # is written, through this script's lines
        return replace(k, variables=tuple((n, _argv(v, path, bound) if n == ARGV else v)
                                          for n, v in k.variables))

    return ReaderOutput(out.facts, {n: _moved(s, path, bound) for n, s in out.provenance.items()},
                        tuple(problem(p) for p in out.problems),
                        tuple(link(k) for k in out.linked))


def _argv(value: str, path: str, bound: Bound) -> str:
    words = decode(value)
    if not isinstance(words, list):
        return value
    return encode([replace(w, where=_moved(w.where, path, bound)) for w in words])


def line_of(bound: Bound, line: int | None) -> int | None:
    """The script's own line for ``line`` of the bound text (None: a caller's, or not known)."""
    got = bound.where(line)
    return got if isinstance(got, int) else None


_USES = re.compile(r"\$(?:[@*1-9]|\{[@*1-9])")


def unknown_args(path: str, text: str, argv: str | None) -> ConfigProblem | None:
    """A script run with arguments not known here (:func:`.shellargs.unknown`) that uses
    them: what they set on its launch line wins and was not read, so FP8 "no" is not known
    (``cut``: jobs/walk.py states ``config.<kind>.unread_args``)."""
    why = decode(argv)
    if not isinstance(why, str):
        return None
    m = next((m for m in _USES.finditer(strip_comments(text))), None)
    if m is None:
        return None
    return ConfigProblem(path, text.count("\n", 0, m.start()) + 1, (
        f"uses its arguments, which are not known here: {why}; what they set was not read"),
        level="warning", cut=True)


_MOVES = re.compile(r"(?m)^[ \t]*(?:shift\b|set[ \t]+(?:--|[^-+\s])|[\w.:-]+[ \t]*\(\)|function[ \t]|"
                    r"(?:source|\.)[ \t]+[^\s;&|]+[ \t]+[^\s;&|#])")


def positional(text: str, argv: str | None) -> dict[str, str]:
    """``$1`` .. ``$9``, ``${10}`` and above (and how many there are,
    :data:`.shellvars.COUNT`, for ``${12:-default}``) for the readers that look a flag's ``$VAR`` up in the script's
    assignments (:func:`.shellvars.typed`: ``--save $1``, ``PRECISION=$1``), when nothing in
    the script moves them (``shift``, ``set --``), no function has its own and no script it
    sources gets others (``source env.sh a``: its ``Q=$1`` is ``a``): a value the caller
    cannot know is a :func:`.shellvars.runtime` marker."""
    words = decode(argv)
    if not isinstance(words, list) or _MOVES.search(strip_comments(text)):
        return {}
    # every one: holdout12's Pai-Megatron-Patch scripts take 27 (`TP=${10}`, `SP=${15}`)
    loose = next((n for n, w in enumerate(words, 1) if w.loose), None)
    got = {str(n): (runtime(f"argument {n}: {w.opaque}") if w.opaque else
                    runtime(f"argument {loose} is a run-time value bash may split into any "
                            "number of words") if loose is not None and n > loose else w.text)
           for n, w in enumerate(words, 1)}
    if loose is None:       # (after a loose one, how many there are is not known)
        got[COUNT] = str(len(words))
    return got
