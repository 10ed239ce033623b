"""Variables a launch script sets only inside an ``if`` / ``case`` branch that may not run, for
the readers of a Python script's argv (:func:`.launch.python_scripts`, :mod:`.pymodrun`).

redteam8 (issue 21): ``if [ -n "$X" ]; then F=--fp8; fi`` then ``python train.py $F`` was read
as no ``--fp8`` (FP8 "no"); bash passes ``--fp8`` whenever ``X`` is set when it runs. Such a
``$F`` is passed on as a :func:`maybe` marker naming its possible value, and
:func:`~.pyvalues.option_value` makes an option that value could give Unknown with the reason
(only that option: ``$DEVICE_BATCH_SIZE_ARG`` of nanochat runs/miniseries.sh l.62-78, set per
depth in a loop, leaves ``--fp8`` as it is). Branches the shell kit decides
(:mod:`.shellexpand`: ``if [ "$P" = fp8 ]`` with ``P`` known) are not "may not run".
"""

from __future__ import annotations

import re
from functools import lru_cache

from preflight.reading.shellvars import RUNTIME, typed

MAYBE = RUNTIME + "maybe:"
"""Starts an argv word that only some runs of the script give (then its value, a unit
separator, and why)."""
_REF = re.compile(r'^"?\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))"?$')


def maybe(value: str, why: str) -> str:
    """The marker of a word that is ``value`` in some runs and nothing in others."""
    return MAYBE + value.replace("\x1f", " ") + "\x1f" + why


def maybe_parts(word: str) -> tuple[str, str] | None:
    """(value, why) of a :func:`maybe` marker, else None."""
    if not word.startswith(MAYBE):
        return None
    value, _, why = word[len(MAYBE):].partition("\x1f")
    return value, why


@lru_cache(maxsize=8)
def _conditional(text: str, known: tuple[tuple[str, str], ...]
                 ) -> dict[str, tuple[str, int, bool]]:
    """Each variable a statement of ``text`` assigns: (its first value, line, whether that
    runs for sure); one set for sure anywhere is sure (its value: the line pattern's, when
    it has one)."""
    from preflight.reading.shellexpand import Eval, TooLarge
    from preflight.reading.shellwords import split

    words = split(text)
    ev = Eval(dict(known))
    sure: dict[str, tuple[str, int, bool]] = {}
    found: dict[str, tuple[str, int, bool]] = {}
    try:
        ev.prepare(words)
        for st in words.statements:
            if st.assign is not None and not st.prefix and \
                    not any(ev.runs.get(b) is False for b in st.branch):
                fields = [f for w in st.words for f in ev.word(w, st.branch, False)]
                value = "".join(s.text for f in fields for s in f) if not any(
                    s.opaque for f in fields for s in f) else None
                line = text.count("\n", 0, st.offset) + 1
                if any(ev.runs.get(b) is not True for b in st.branch):
                    if value is not None:
                        found.setdefault(st.assign, (value, line, False))
                elif value is not None and st.branch and not st.loop:
                    sure.setdefault(st.assign, (value, line, True))
                else:
                    sure[st.assign] = ("", line, False)     # the line pattern's value
            ev.step(st)
    except TooLarge:
        return {}
    return {**{name: got for name, got in found.items() if name not in sure}, **{
        name: got for name, got in sure.items() if got[2]}}


def argv_word(word: str, text: str, variables: dict[str, str]) -> str:
    """``word`` of a launch line as the Python script gets it (:func:`~.shellvars.typed`), or
    a :func:`maybe` marker where it is a variable set only in a branch that may not run."""
    m = _REF.match(word) if "$" in word and ("if" in text or "case" in text) else None
    if m is not None:
        known = tuple(sorted((k, v) for k, v in variables.items()
                             if not re.search(r"[$`]", v) and not k.startswith("@")))
        name = m.group(1) or m.group(2)
        got = _conditional(text, known).get(name)
        if got is not None and got[2] and name not in variables:
            return got[0]    # `if [ -n "$X" ]; then F=--fp8; fi` with X set: a one-line branch
        if got is not None and not got[2]:
            return maybe(got[0], f"${name} is set only inside an if/case "
                                 f"branch (line {got[1]}) that may not run")
    return str(typed(word, variables))


def exports(text: str, known: tuple[tuple[str, str], ...]) -> dict[int, tuple[bool | None, int]]:
    """Each ``export`` (``declare -x`` & co.) of ``text`` by the offset of its ``NAME[=value]``
    word: (whether it runs: its if/case branches and loop bodies as decided here, its line).
    redfix (session 37, redteam10's open item): ``if [ -n "$X" ]; then export DISABLE_FP8=1;
    fi`` was read as always exported, a script's ``os.environ`` lookup of it a fixed value.
    Walked once with the script's function calls (:func:`.shellfuncs.walk`)."""
    from preflight.reading.shellfuncs import walk

    return walk(text, known).exports
