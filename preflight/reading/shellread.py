"""The ``read`` builtin taking a here-document (``read -r -d '' CMD <<EOF``): its options as
bash parses them and what it puts in its variable, for :mod:`.shellheredoc`.

Split out of shellheredoc.py (shell16, session 43: it was at the 400-line bound). What bash
does (bash manual, the ``read`` builtin): it reads up to its delimiter (``-d ''``: the NUL
that never comes, so the whole body; no ``-d``: the first line), removes backslashes unless
``-r``, and trims blanks and newlines at both ends for one name; several names, ``-a``,
``-n`` / ``-N`` / ``-u`` split or read at run time: not followed (:attr:`ReadSpec.why`).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace

from preflight.reading.shelltypes import Part

_NAME = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class ReadSpec:
    """What a ``read`` command takes from its input."""

    names: tuple[str, ...] = ("REPLY",)
    delim: str | None = None      # None: a newline; "": NUL (the whole input); else that char
    raw: bool = False             # -r: backslashes are kept
    why: str | None = None        # why its value cannot be known here (several names, -n ...)


def read_spec(args: list[str | None]) -> ReadSpec:
    """``read``'s arguments (None: a word built from a variable) as bash's builtin reads them."""
    names: list[str] = []
    delim: str | None = None
    raw = False
    why: str | None = None
    i = 0
    opts = True
    while i < len(args):
        arg = args[i]
        i += 1
        if arg is None:
            return ReadSpec((), why="an argument of read is a variable, known at run time")
        if opts and arg == "--":
            opts = False
        elif opts and arg.startswith("-") and len(arg) > 1:
            for j, c in enumerate(arg[1:], 2):
                if c == "r":
                    raw = True
                elif c in "se":
                    continue
                elif c in "dapntuNi":
                    value: str | None = arg[j:]
                    if not value:
                        value = args[i] if i < len(args) else None
                        i += 1
                    if value is None:
                        return ReadSpec((), why=f"read -{c} takes a value known at run time")
                    if c == "d":
                        delim = "" if value in ("", "\x00") else value[0]
                    elif c == "a":
                        why = f"read -a {value} splits the text into an array at run time"
                        names.append(value)
                    elif c in "nNu":
                        why = (f"read -{c} {value} reads " + ("another file descriptor"
                               if c == "u" else "a number of characters") + " at run time")
                    break
                else:
                    why = f"read option -{c} is not followed here"
        else:
            opts = False
            names.append(arg)
    if not names:
        names = ["REPLY"]
    if any(not _NAME.fullmatch(n) for n in names):
        return ReadSpec((), why="read names something that is no variable")
    if len(names) > 1 and why is None:
        why = f"read splits the text among {len(names)} names at run time"
    return ReadSpec(tuple(names), delim, raw, why)


def read_words(raw: str) -> list[str | None] | None:
    """The words of ``read``'s arguments as written (None: one holds a ``$`` expansion)."""
    raw = re.sub(r"\$'([^']*)'", lambda m: "'\x00'" if m.group(1) in ("\\0", "") else
                 "'" + m.group(1)[:1] + "'", raw)
    try:
        words = shlex.split(raw)
    except ValueError:
        return None
    return [None if "$" in w or "`" in w else w for w in words]


def read_value(value: str, spec: ReadSpec) -> str:
    """What ``read`` (one name) puts in its variable from ``value``."""
    if not spec.raw:
        value = re.sub(r"\\(\n|.)", lambda m: "" if m.group(1) == "\n" else m.group(1), value,
                       flags=re.S)
    if spec.delim is None:
        value = value.split("\n", 1)[0]
    elif spec.delim:
        value = value.split(spec.delim, 1)[0]
    return value.strip(" \t\n")


def value_parts(parts: list[Part], spec: ReadSpec) -> list[Part]:
    """What ``read`` with one name keeps of ``parts``: backslashes removed unless ``-r``, up
    to its delimiter (a newline unless ``-d``; ``-d ''``: everything), blanks trimmed."""
    out: list[Part] = []
    stop = "\n" if spec.delim is None else spec.delim
    for part in parts:
        if part.var:
            out.append(part)
            continue
        text = part.text if spec.raw else re.sub(
            r"\\(\n|.)", lambda m: "" if m.group(1) == "\n" else m.group(1), part.text,
            flags=re.S)
        if stop and stop in text:
            out.append(replace(part, text=text.split(stop, 1)[0]))
            break
        out.append(replace(part, text=text))
    return [p for p in trimmed(out, " \t\n") if p.var or p.text]


def trimmed(parts: list[Part], chars: str, left: bool = True) -> list[Part]:
    """``parts`` less the ``chars`` at their end (and start, ``left``), over literal parts."""
    out = list(parts)
    while out and not out[-1].var and out[-1].text.rstrip(chars) != out[-1].text:
        last = out.pop()
        if last.text.rstrip(chars):
            out.append(replace(last, text=last.text.rstrip(chars)))
            break
    while left and out and not out[0].var and out[0].text.lstrip(chars) != out[0].text:
        first = out.pop(0)
        if first.text.lstrip(chars):
            cut = len(first.text) - len(first.text.lstrip(chars))
            out.insert(0, replace(first, text=first.text[cut:], offset=first.offset + cut))
            break
    return out
