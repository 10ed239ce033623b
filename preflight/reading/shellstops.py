"""Where bash stops a launch script before its training command runs: ``set -e`` in force
(:func:`errexit`) and a command that fails there, such as ``read -r -d '' CMD <<EOF``
(:func:`read_stops`). Nothing is run.
"""

from __future__ import annotations

import re

from preflight.reading.shell import HereDoc, operator_end
from preflight.reading.shellheredoc import MAX_TAKEN, Taken, body, takes
from preflight.reading.types import ConfigProblem

# `set -e`, `set -ex`, `set -euo pipefail`, `set -o errexit` (on) and `set +e` (off)
_SET = re.compile(r"^[ \t]*set[ \t]+([^\n;&|#]*)", re.M)


def errexit(text: str, pos: int) -> int | None:
    """The line of the ``set -e`` in force at ``pos`` of ``text``, if one is."""
    line = None
    for m in _SET.finditer(text, 0, pos):
        words = m.group(1).split()
        for n, word in enumerate(words):
            sign = _errexit_sign(words, n)
            if sign == "-":
                line = text.count("\n", 0, m.start()) + 1
            elif sign == "+":
                line = None
    return line


def _errexit_sign(words: list[str], n: int) -> str | None:
    """``-`` where ``words[n]`` of a ``set`` turns errexit on (``-e``, ``-ex``, ``-o errexit``),
    ``+`` where it turns it off (``+e``, ``+o errexit``), else None."""
    word = words[n]
    if word in ("-o", "+o") and n + 1 < len(words) and words[n + 1] == "errexit" or \
            re.fullmatch(r"[-+][a-zA-Z]*e[a-zA-Z]*", word):
        return word[0]
    return None


def read_stops(path: str, text: str, docs: list[HereDoc],
               took: list[Taken | None] | None = None) -> list[ConfigProblem]:
    """``read -r -d '' CMD <<EOF`` under ``set -e``: ``read`` finds no NUL in the body, so it
    returns 1 at the end of its input ("The exit status is zero, unless end-of-file is
    encountered", bash manual, the read builtin) and errexit ends the script there: the
    launch built from CMD never runs. ``|| true`` (or ``&&``) after it keeps the script going.
    ``took``: :func:`.shellheredoc.takes` of ``docs`` when already known."""
    took = takes(text, docs) if took is None else took
    for doc, got in zip(docs[:MAX_TAKEN], took, strict=True):
        if got is None or got.how != "read" or got.spec is None:
            continue
        delim = "\n" if got.spec.delim is None else got.spec.delim
        if delim and delim in body(text, doc):
            continue                       # read stops at its delimiter: status 0
        end = operator_end(text, doc.at) or doc.at
        rest = text[end:text.find("\n", end) if "\n" in text[end:] else len(text)].lstrip()
        if rest.startswith(("||", "&&")):
            continue
        on = errexit(text, doc.at)
        if on is None:
            continue
        return [ConfigProblem(path, doc.line, (
            f"under `set -e` (line {on}) bash stops the script here: `read` reaches the end of "
            "the here-document without its delimiter (-d '' waits for a NUL) and returns 1, so "
            "nothing after this line runs and the job is not started; its settings were read "
            "as meant"), fix=f"Write `<<{doc.delimiter} || true` on this line, or build the "
                             f"variable with $(cat <<{doc.delimiter} ... {doc.delimiter}).")]
    return []
