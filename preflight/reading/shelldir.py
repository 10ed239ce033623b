"""The script's own folder in a launch script, as bash computes it (issue 22): one reading for
every reader of the shell kit. Nothing is run and no file is opened here.

Launch scripts find their repository from where they sit, not from where they are started:
XTuner's examples/v1/scripts/run_sft.sh:12-14 @ b934f46 (holdout13) writes
``SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"``, ``REPO_ROOT="$(cd
"${SCRIPT_DIR}/../../.." && pwd)"``, ``CONFIG_PATH="${1:-${REPO_ROOT}/examples/v1/config/
sft_qwen3p5.py}"``; Megatron-Bridge scripts/training/train.sh:17-27 @ 51885cf1 runs
``"${SCRIPT_DIR}/setup_experiment.py"``. Read as a run-time value, the config was never read.

The lexer (:mod:`.shellquote`) turns these substitutions into a :class:`~.shelltypes.Part`
whose ``folder`` says the operation: ``$(dirname W)``, ``$(cd W && pwd)`` (``;`` too, ``cd
-P`` / ``pwd -P``, ``>/dev/null`` dropped), ``$(realpath W)``, ``$(readlink -f|-e|-m W)``,
``${BASH_SOURCE%/*}``; ``$0`` / ``${BASH_SOURCE[0]}`` are the script file only as their
argument (alone they stay run-time values). The evaluator (:mod:`.shellexpand`) expands ``W``
and applies the operation to text that starts with a marker (:data:`SELF`: the folder of the file
the text is written in, ``BASH_SOURCE``'s; :data:`RUN`: the folder of the script bash runs,
``$0``'s, which in a sourced file is the sourcing script's), so ``..`` steps, ``"${DIR}"/x``
joins and nested defaults are plain text. A reader puts the real folder in with
:func:`resolve`: a path that leaves the job (past the job root, a symlink out of it) is not known,
with the reason, and nothing outside is read. A relative ``cd`` (the folder the script is
started from) and ``pwd`` alone stay run-time values.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from preflight.reading import shellnames
from preflight.reading.shelltypes import Arg, Field, Part, Word

SELF = "\x01script-folder"
"""The folder of the script the text is written in (``${BASH_SOURCE[0]}``'s)."""
RUN = "\x01run-folder"
"""The folder of the script bash runs (``$0``'s: the sourcing script's in a sourced file)."""
PHYSICAL = "\x01P"
"""After a marker: symbolic links resolved (``pwd -P``, ``cd -P``, ``realpath``, ``readlink -f``)."""
FILE = "\x02"
"""A last path component that is the script file itself (``$0``, ``${BASH_SOURCE[0]}``)."""

RUNS = "@runs"
"""Key of the variables a sourced script is read with that holds the path of the script bash
runs (its ``$0``: :data:`RUN`); no shell variable can have this name."""

MAX_INNER = 2000
"""Characters of one ``$( ... )`` read as a folder operation (a real one: under 100)."""
MAX_DEPTH = 8
"""Substitutions nested in one another read as folder operations."""

SCRIPT_WHY = "is the script's path, given when it runs"
"""Why ``$0`` / ``${BASH_SOURCE[0]}`` alone is a run-time value; a folder operation on a
variable holding it (``SCRIPT_PATH="${BASH_SOURCE[0]}"; $(dirname $SCRIPT_PATH)``: Megatron-LM
examples/rl/model_configs/*.sh @ d98e8a6) takes it as the script."""

_MARK = re.compile("(\x01(?:script|run)-folder)(\x01P)?")
_FIRST = re.compile(r"\s*(?:builtin\s+|command\s+)?(cd|dirname|realpath|readlink)\b")
_SCRIPT = re.compile(r"(0|BASH_SOURCE(?:\[0\])?)(%/\*)?")
_END = re.compile(r"[\s,:;=]")


def script_part(inner: str, at: int, quoted: bool) -> Part | None:
    """``$0`` / ``${BASH_SOURCE[0]}`` (the script file, as a folder operation's argument) and
    ``${BASH_SOURCE%/*}`` (its folder); ``inner`` is what the braces hold (or the name)."""
    m = _SCRIPT.fullmatch(inner)
    if m is None:
        return None
    whose = "run" if m.group(1) == "0" else "source"
    why = f"${{{inner}}} {SCRIPT_WHY}"
    file = Part("$" + inner, at, var=True, quoted=quoted, opaque=why, folder=(whose, ()))
    if m.group(2) is None:
        return file
    return Part("$" + inner, at, var=True, quoted=quoted, opaque=why, folder=("dirname", (file,)))


def substitution(text: str, start: int, end: int, quoted: bool, depth: int,
                 lexer: Callable[[str, int], Any]) -> Part | None:
    """The ``$( ... )`` at ``text[start:end]`` as a folder operation, or None: another command
    (``lexer(text, depth)``: the shell lexer, for its argument word)."""
    inner = text[start + 2:end - 1]
    if depth < MAX_DEPTH and len(inner) <= MAX_INNER and not _FIRST.match(inner):
        return shellnames.substitution(inner, start, quoted, depth, lexer)   # basename, sed
    if depth >= MAX_DEPTH or len(inner) > MAX_INNER or not _FIRST.match(inner) or \
            "`" in inner or not _operators(inner) <= {"&&", ";"}:
        return None
    statements = lexer(inner, depth + 1).run().statements
    words = [[w for w in st.words] for st in statements]
    if not words or len(words) > 2 or any(st.assign or st.test for st in statements):
        return None
    op = _operation(words[0], words[1] if len(words) == 2 else None)
    if op is None:
        return None
    name, word = op
    return Part("$(...)", start, var=True, quoted=quoted, folder=(name, moved(word, start + 2)),
                opaque=f"command substitution {text[start:end][:60]!r} is computed at run time")


def _operators(inner: str) -> set[str]:
    """The operators between the commands of ``inner`` (quotes and nested ``$( )`` skipped):
    ``cd D || pwd`` or ``dirname "$0" | tr`` is no folder."""
    ops, depth, i, quoted = set(), 0, 0, False
    while i < len(inner):
        c = inner[i]
        if c == "'" or quoted:           # (in "...": a `;` is refused too, which is safe)
            quoted = quoted != (c == "'")
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and c in "|;&\n" and inner[i - 1:i] != ">" and inner[i + 1:i + 2] != ">":
            two = inner[i:i + 2]
            ops.add(two if two in ("&&", "||") else ";" if c == "\n" else c)
            i += len(two) if two in ("&&", "||") else 1
            continue
        i += 1
    return ops


def moved(word: Word, shift: int) -> Word:
    """``word``'s parts (with their defaults' and folder operations' own) ``shift`` further on:
    a nested lexer's offsets are in the text it was given."""
    return tuple(replace(p, offset=p.offset + shift, default_parts=moved(p.default_parts, shift),
                         folder=(p.folder[0], moved(p.folder[1], shift)) if p.folder else None)
                 for p in word)


def _text(word: Word) -> str | None:
    return "".join(p.text for p in word) if all(not p.var for p in word) else None


def _operation(first: list[Word], second: list[Word] | None) -> tuple[str, Word] | None:
    names = [_text(w) for w in first]
    opts = [n for n in names[1:] if n is not None and n.startswith("-") and n != "--"]
    args = [w for w, n in zip(first[1:], names[1:]) if n is None or not n.startswith("-")]
    if len(args) != 1 or (names[0] == "cd") != (second is not None):
        return None
    if names[0] == "cd":
        after = [_text(w) for w in second or []]
        if after[:1] != ["pwd"] or any(a not in ("-P", "-L") for a in after[1:]) or \
                any(o not in ("-P", "-L", "-e") for o in opts):
            return None
        physical = "-P" in opts or "-P" in after[1:]
        return ("cd-P" if physical else "cd"), args[0]
    if names[0] == "dirname":
        return ("dirname", args[0]) if not opts else None
    if names[0] == "realpath" and set(opts) <= {"-e", "-m", "-q"}:
        return "real", args[0]
    if names[0] == "readlink" and opts and set(opts) <= {"-f", "-e", "-m", "-n", "-q"} and \
            set(opts) & {"-f", "-e", "-m"}:
        return "real", args[0]
    return None


def evaluate(part: Part, expand: Callable[[Word], list[Field]],
             outer: dict[str, str] | None = None) -> str | None:
    """The text a folder operation gives (``expand``: the evaluator's expansion of a word, not
    split; ``outer``: its outer variables, with the script's path where known), or None: not
    known here (the argument is a run-time value, a relative folder)."""
    assert part.folder is not None
    if shellnames.handles(part):
        return shellnames.evaluate(part, expand, outer or {})
    name, word = part.folder
    if name in ("run", "source"):
        return None
    word = tuple(Part((RUN if p.folder[0] == "run" else SELF) + "/" + FILE, p.offset,
                      quoted=True) if p.folder and p.folder[0] in ("run", "source") else p
                 for p in word)
    fields = expand(word)
    text = field_text(fields[0]) if len(fields) == 1 else None
    return None if text is None else apply(name, text)


def field_text(field: Field, limit: int | None = None) -> str | None:
    """One expanded field as text, the script's own path (``$0``, ``${BASH_SOURCE[0]}``) as
    :data:`RUN` / :data:`SELF` + ``/`` + :data:`FILE` for :func:`apply` and :func:`moved` to
    settle; None for any other run-time value, or past ``limit`` characters."""
    text = ""
    for seg in field:
        if seg.opaque is not None and not seg.opaque.endswith(SCRIPT_WHY):
            return None
        text += seg.text if seg.opaque is None else \
            (RUN if seg.text == "$0" else SELF) + "/" + FILE
        if limit is not None and len(text) > limit:
            return None
    return text


def apply(name: str, path: str) -> str | None:
    """``dirname`` / ``cd && pwd`` / ``realpath`` of ``path`` as text (None: not known)."""
    m = _MARK.match(path)
    if m is None:
        if name == "dirname":
            return posixpath.dirname(path.rstrip("/")) or ("/" if path.startswith("/") else ".")
        if not path.startswith("/") or FILE in path:
            return None           # relative to the folder the script is started from
        return posixpath.normpath(path)     # `cd /` && pwd is `/` (known; not the job's)
    head, rest = m.group(0), path[m.end():]
    if rest and not rest.startswith("/"):
        return None
    if name == "dirname":
        rest = rest.rstrip("/")
        return head + ("/.." if not rest else posixpath.dirname(rest).rstrip("/"))
    if name == "cd" and not m.group(2):
        return None if FILE in rest else head + _normal(rest)
    if name == "cd-P" and FILE in rest:
        return None
    return m.group(1) + PHYSICAL + rest     # symlinks resolved when the folder is put in


def _normal(rest: str) -> str:
    """``/a/../b/.`` as bash's logical ``cd`` reads it (``..`` drops a name, kept past the
    marker's folder)."""
    out: list[str] = []
    for c in rest.split("/"):
        if c in ("", "."):
            continue
        if c == ".." and out and out[-1] != "..":
            out.pop()
        else:
            out.append(c)
    return "".join("/" + c for c in out)


def anchored(text: str) -> bool:
    """Whether ``text`` holds the script's folder (:data:`SELF` / :data:`RUN`)."""
    return "\x01" in text and _MARK.search(text) is not None


def starts(text: str) -> bool:
    """Whether ``text`` is a path that starts at the script's folder."""
    return _MARK.match(text) is not None


def settle(text: str, script: str, runs: str | None = None) -> str:
    """``text`` with :data:`SELF` (and :data:`RUN`, where ``runs``, the script bash runs, is
    given) put in as absolute folders, not checked: for values a sourced file hands on."""
    def put(m: re.Match[str]) -> str:
        whose = script if m.group(1) == SELF else runs
        if whose is None:
            return m.group(0)
        folder = os.path.dirname(os.path.abspath(whose))
        return os.path.realpath(folder) if m.group(2) else folder
    return _MARK.sub(put, text) if "\x01" in text else text


def resolve(text: str, script: str, runs: str | None = None) -> tuple[str | None, str | None]:
    """(``text`` with the script's folder put in, None) or (None, why not known): every path
    that starts at a marker is made absolute (``..`` applied; symlinks resolved where bash
    resolves them) and must stay in the job (the read boundary in force, else the folder of
    ``script``'s job root), a path to the script file itself is the script."""
    if not anchored(text):
        return text, None
    from preflight.reading.boundary import current

    out, at = [], 0
    for m in _MARK.finditer(text):
        end = _END.search(text, m.end())
        stop = end.start() if end else len(text)
        if m.start() < at:
            continue
        whose = script if m.group(1) == SELF or runs is None else runs
        folder = os.path.dirname(os.path.abspath(whose))
        rest = text[m.end():stop]
        if rest and not rest.startswith("/"):
            return None, "a path joined to the script's folder without a '/'"
        rest = rest.replace(FILE, os.path.basename(whose))
        full = os.path.realpath(folder + rest) if m.group(2) else \
            os.path.normpath(folder + _normal(rest))
        boundary = current()
        if boundary is not None and not boundary.allows(full):
            return None, (f"{shown(text[m.start():stop])} is {full}, outside the job "
                          f"(job root: {boundary.where()}): not read")
        out += [text[at:m.start()], full]
        at = stop
    return "".join(out) + text[at:], None


def shown(text: str) -> str:
    """A marked path as a person reads it (the markers are control characters: never in a
    message)."""
    return _MARK.sub(lambda m: "$(dirname $0)" if m.group(1) == RUN else "<the script's folder>",
                     text).replace(FILE, "<the script>")


def resolved(args: tuple[Arg, ...], script: str, runs: str | None = None) -> tuple[Arg, ...]:
    """A launch command's arguments with the script's folder put in (:func:`resolve`); one
    whose path leaves the job is a run-time value with the reason."""
    out = []
    for arg in args:
        if arg.opaque is None and anchored(arg.text):
            text, why = resolve(arg.text, script, runs)
            arg = replace(arg, text=text) if text is not None else replace(arg, opaque=why)
        out.append(arg)
    return tuple(out)
