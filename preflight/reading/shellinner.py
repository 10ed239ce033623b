"""The script a ``bash -c STRING`` / ``sh -lc STRING`` / ``eval WORDS`` runs, for the launch walk
of :mod:`.shellexpand`: which word is that script (:func:`inner_script`), and the launches found
in it marked with the branches their pieces were set in (:func:`carried`).

Split out of shellexpand.py (shfix2, session 39: it was at the 400-line bound).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from preflight.reading.shellfields import join as _join
from preflight.reading.shelltypes import Arg, Field

if TYPE_CHECKING:
    from preflight.reading.shellexpand import Launch

_SHELLS = {"bash", "sh", "zsh", "dash"}


def carried(found: Launch, field: Field, branch: tuple[int, ...],
             runs: dict[int, bool | None]) -> Launch:
    """``found`` (a launch in an ``eval`` / ``bash -c`` string) with each word the string got
    from a value set in an if/case branch not known to run marked :attr:`Arg.conditional`: the
    string is split again, and its pieces lose the branches they were set in (holdout12: Pai's
    ``pr_options`` in ``run_cmd="torchrun ... ${pr_options}"; eval ${run_cmd}``)."""
    spans = [(s.offset, s.offset + max(len(s.text), 1)) for s in field
             if any(b not in branch and runs.get(b) is not True for b in s.branch)]
    if not spans:
        return found

    def mark(arg: Arg) -> Arg:
        if arg.conditional is not None:
            return arg
        hit = next((a for a, b in spans if a <= arg.offset < b), None)
        return arg if hit is None else replace(arg, conditional=hit)

    return replace(found, entry=mark(found.entry), args=tuple(map(mark, found.args)),
                   before=tuple(map(mark, found.before)))


def inner_script(fields: list[Field]) -> tuple[int, Field] | None:
    """``bash -c STR`` / ``sh -lc STR`` / ``eval WORDS``: (index of the shell word, the string
    that is run as a script of its own)."""
    for n, f in enumerate(fields):
        name = os.path.basename("".join(s.text for s in f))
        if name == "eval" and n + 1 < len(fields):
            return n, _join(fields[n + 1:])
        if name in _SHELLS:
            k = n + 1
            while k < len(fields):
                opt = "".join(s.text for s in fields[k])
                if not opt.startswith("-") or opt.startswith("--"):
                    return None
                k += 1
                if "c" in opt[1:]:
                    return (n, fields[k]) if k < len(fields) else None
            return None
    return None
