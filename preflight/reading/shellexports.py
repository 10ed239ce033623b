"""The variables a sourced config script exports, when they are all known from its text, for
the scripts its sourcing script then runs (:mod:`.shellcalls`; holdout24 mlperf51: ``source
config_MI325X_1x8x1.sh`` exports ``FP8=True`` and the ``FP8_*`` settings, then ``bash
run_and_time.sh`` runs ``torchrun src/train.py``, whose Hydra YAML reads them through
``${oc.env:FP8,False}``: "whose exports are not followed here", FP8 Unknown).
:mod:`.launchenv` does the same for ``source x.env`` followed directly by ``python train.py``
(the process's environment gets x.env's exports, not "every variable Unknown"), where the
``source`` runs once, always (:func:`top_level`).

bash runs a sourced file's commands in the sourcing shell (bash(1) "source"): what it
exports is in the environment of every command run after it. Followed only where the text
says all of it, conservatively (None otherwise, and the caller keeps "exports not followed"):
each ``export NAME[=value]`` / ``declare -x`` at the file's top level, in no ``if`` / ``case``
branch, loop, function body or subshell; no ``set -a`` / ``set -o allexport`` (every
assignment exported), no ``source`` of another file, no ``eval``, no name built at run time
(``export $NAME``), no command named by a variable (which may be ``export``).
"""

from __future__ import annotations

import json
import re

from preflight.reading.shelltypes import literal
from preflight.reading.shellwords import split

SOURCED = "@sourced"
"""Key of a script's variables (what it sources: jobs/sourcing.py) that holds, as JSON, the
names each file it sources exports, by the file's name (:func:`followed`); no shell variable
can have this name."""

MAX_NAMES = 1024
"""Names kept (a real config exports tens); past them: not followed."""

_DYNAMIC = {"eval", "source", ".", "set", "declare", "typeset", "local", "readonly", "exec",
            "trap", "alias"}
"""Commands that may export names the text does not show (``set`` only with ``-a`` /
``allexport``, looked at below)."""


def exported_names(text: str) -> tuple[str, ...] | None:
    """The names ``text`` exports (in order), or None where that is not known here."""
    words = split(text)
    if words.truncated_at is not None or words.unclosed is not None:
        return None
    bodies = words.functions
    names: dict[str, None] = {}
    for st in words.statements:
        inside = any(a <= st.offset < b for a, b in bodies)
        if st.unexported:
            return None           # `export -n X`: where it lands is not followed here
        if st.exported:
            if st.branch or st.loop or st.subshell or inside:
                return None
            got = [st.assign] if st.assign is not None else [literal(w) for w in st.words]
            if any(n is None or not re.fullmatch(r"[A-Za-z_]\w*", n) for n in got):
                return None       # `export $NAME`
            names.update(dict.fromkeys(n for n in got if n))
            if len(names) > MAX_NAMES:
                return None
            continue
        if st.assign is not None or st.test is not None or not st.words:
            continue
        head = literal(st.words[0])
        if head is None:
            return None           # a command named at run time may be `export`
        if head == "set" and any(re.fullmatch(r"[-+][A-Za-z]*a[A-Za-z]*|allexport", t or "")
                                 for t in map(literal, st.words[1:])):
            return None
        if head in _DYNAMIC and head != "set":
            return None
    return tuple(names)


def encode(by_file: dict[str, tuple[str, ...] | None]) -> str:
    """:data:`SOURCED`'s value for the files sourced (their paths) and what each exports; two
    files of one name whose exports differ: neither known."""
    out: dict[str, list[str] | None] = {}
    for path, names in by_file.items():
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        got = list(names) if names is not None else None
        out[name] = got if name not in out or out[name] == got else None
    return json.dumps({k: v for k, v in out.items() if v is not None})


def followed(variables: dict[str, str], sourced: str) -> tuple[str, ...] | None:
    """The names the file ``sourced`` (as the ``source`` line names it) exports, where
    :data:`SOURCED` in ``variables`` knows them; else None."""
    try:
        got = json.loads(variables.get(SOURCED) or "{}")
    except ValueError:
        return None
    names = got.get(sourced.replace("\\", "/").rsplit("/", 1)[-1]) if isinstance(got, dict) \
        else None
    return tuple(str(n) for n in names) if isinstance(names, list) else None


def top_level(text: str, at: int) -> bool:
    """Whether the command whose word is at ``at`` runs once, always: in no if/case branch,
    loop or subshell (a ``source`` in an undecided branch may not run: not followed)."""
    words = split(text)
    st = max((st for st in words.statements if st.offset <= at), key=lambda s: s.offset,
             default=None)
    return st is not None and not (st.branch or st.loop or st.subshell or any(
        a <= st.offset < b for a, b in words.functions)) and words.truncated_at is None
