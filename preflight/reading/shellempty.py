"""A launch word that is only a variable the script never sets (``torchrun pretrain_gpt.py
--bf16 $EXTRA_ARGS``): read as empty, what bash expands it to when the caller sets nothing
(bash(1) "Parameter Expansion" / "Word Splitting": an unquoted unset parameter expands to no
word), but said: an info note, FP8D-CFG-EMPTY-ASSUMED, naming the variable and the file:line,
as FP8D-CFG-FOLDER-ASSUMED does for ``$PWD``. The flags the variable may hold at run time are
not checked here; dropping the word silently was a confident "no" from what the tool did not see
(redteam18). A word set in an if/case branch the text does not decide is the reader's Unknown,
as before: no assumption is made there.
"""

from __future__ import annotations

import re

from preflight.reading.shelltypes import Arg
from preflight.reading.types import ConfigProblem

CODE = "assumed_empty"
MAX_NOTES = 16
"""Notes per file (a script with more unset launch words says so for the first ones)."""

_WORD = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_SOURCES = re.compile(r"(?m)^[ \t]*(?:source|\.)[ \t]+[^\s;&|]")
_FLAG = re.compile(r"--?[A-Za-z][\w.-]*")
_UNSET = "is not set in the script (it comes from the environment)"


def unset_name(arg: Arg) -> str | None:
    """The variable ``arg`` is made of alone, where the script never sets it; else None."""
    m = _WORD.fullmatch(arg.text)
    if m is None or arg.opaque is None or arg.conditional is not None or \
            not arg.opaque.endswith(_UNSET):
        return None
    return m.group(1)


def standalone(words: list[str]) -> list[int]:
    """The indexes of ``words`` that are no value of the option before them (``--nnodes
    $NUM_NODES`` is a value the reader keeps as it is, no word read as empty); a bare flag
    before an unset word (``--bf16 $EXTRA``) is taken for an option with a value here, so no
    note there (the Megatron walk, which knows its bare flags, says it)."""
    return [i for i in range(len(words)) if not (i and _FLAG.fullmatch(words[i - 1]))]


def assumption(name: str) -> str:
    """The words a provenance or a note uses for the assumption."""
    return f"assumes ${name} is empty"


def once(problems: list[ConfigProblem]) -> list[ConfigProblem]:
    """``problems`` with one note per (file, variable): a script is read by more than one reader
    (its framework's walk, the Python script its launch runs), each saying it."""
    seen: set[tuple[str, str]] = set()
    out = []
    for p in problems:
        key = (p.path, _named(p.message))
        if p.code == CODE and key in seen:
            continue
        seen.add(key)
        out.append(p)
    return out


def _named(message: str) -> str:
    m = re.search(r"expands \$(\w+)", message)
    return m.group(1) if m else message


def assigned(text: str, name: str) -> bool:
    """Whether ``text`` sets ``name`` anywhere (in an if/case arm the walk left undecided, a
    function, a loop): then the word is no never-set variable, and the reader's Unknown or
    branch reading stands, with no assumption."""
    n = re.escape(name)
    return re.search(rf"(?<![\w$]){n}(?:\[[^\]\n]*\])?\+?=|"
                     rf"\b(?:read|export|declare|typeset|local|readonly|for|mapfile|readarray|"
                     rf"printf)\b[^\n;]*(?<![\w$]){n}\b", text) is not None


def note(path: str, line: int | None, name: str, problems: list[ConfigProblem],
         text: str = "") -> None:
    """Add the info note for ``$name`` at ``path:line`` once (bounded per file), unless
    ``text`` (the script) sets it somewhere (:func:`assigned`)."""
    if text and assigned(text, name):
        return
    mine = [p for p in problems if p.code == CODE and p.path == path]
    if len(mine) >= MAX_NOTES or any(_named(p.message) == name for p in mine):
        return
    where = f"{path}:{line}" if line else path
    never = "a file the script sources may set (not followed here)" if _SOURCES.search(text) \
        else "the script never sets"
    problems.append(ConfigProblem(path, line, (
        f"the training launch expands ${name} (line {line}), which {never}: read "
        f"as empty, as bash expands it when the caller sets nothing ({assumption(name)}, "
        f"{where}); flags it may hold at run time are not checked"), level="info", code=CODE,
        fix=(f"Run the check with ${name} set as the job sets it (export it in the launch "
             "script, or name the script that sets it), or confirm it is empty.")))


def argv_notes(path: str, line: int, argv: tuple[str, ...], variables: dict[str, str],
               problems: list[ConfigProblem], text: str) -> None:
    """The notes for a Python script's argv read from the launch line's text
    (:func:`.launch.python_scripts`): a word that is only ``$NAME`` the script never sets."""
    for i in standalone(list(argv)):
        m = _WORD.fullmatch(argv[i])
        if m is not None and m.group(1) not in variables:
            note(path, line, m.group(1), problems, text)
