"""The environment a launch script gives its training command: ``export VAR=value`` (or
``VAR=value`` then ``export VAR``) before the command, and ``VAR=value cmd ...`` assignments
that prefix the command itself (bash puts those in that command's environment only).

This is how many jobs ask for FP8 without a config file: ``ACCELERATE_MIXED_PRECISION=fp8
accelerate launch train.py`` (huggingface/trl issue 3860), ``export NVTE_FP8_...=1``. What the
variables mean, and which of them a report may show, is the caller's business
(:mod:`preflight.jobs.scripts` keeps the allow-listed ones as ``env.*`` facts).

Text-level, like :mod:`.launch`: the script with comments and here-documents blanked. A value
with a part decided at run time (``$(...)``, a variable not set in the script) is left out, never
guessed; so is an ``export`` inside a function, and one after the command.
"""

from __future__ import annotations

import re

from preflight.reading import shelldecl
from preflight.reading.launch import command_at, tokens
from preflight.reading.shellvars import typed

_NAME = re.compile(r"([A-Za-z_]\w*)=(.*)\Z", re.S)
# `export X=1`, `declare -x X=1`, `typeset -x`, `readonly -x`... (reading/shelldecl.py)
_EXPORT = re.compile(r"(?m)^[ \t]*(export|declare|typeset|readonly|local)[ \t]+")
_FUNCTION = re.compile(r"(?m)^[ \t]*(?:function[ \t]+\w+|\w+[ \t]*\(\)[ \t]*)\{?")
MAX_VARS = 200
"""Variables kept from one script (a real one sets a few dozen)."""

Var = tuple[str, str, int]      # name, value, offset where it is written


def launch_env(text: str, at: int, variables: dict[str, str]) -> list[Var]:
    """``(name, value, offset)`` for each variable the command at offset ``at`` gets from the
    script: exports before that command first, then its own prefix assignments (which win)."""
    start, _ = command_at(text, at)
    found: dict[str, Var] = {}
    body = _function_spans(text[:start])
    for m in _EXPORT.finditer(text, 0, start):
        if any(a <= m.start() < b for a, b in body):
            continue
        line_start, line_end = command_at(text, m.start())
        words = list(tokens(text, m.end(), line_end))
        options, n = shelldecl.split_options([w for w, _ in words])
        decl = shelldecl.parse(m.group(1), options)
        if not decl.exported or not decl.assigns or m.group(1) == "local":
            continue        # `export -n X=1`, `declare X=1` (not exported), `export -f f`; `local`
            # outside a function (bodies are skipped above) is an error
        for word, pos in words[n:]:
            hit = _NAME.match(word)
            name, raw = (hit.group(1), hit.group(2)) if hit else (word, None)
            if not re.fullmatch(r"[A-Za-z_]\w*", name):
                break
            value = _value(raw, variables) if raw is not None else variables.get(name)
            if value is not None and not decl.plain:
                value = decl.value(value) if not decl.nameref else variables.get(value)
            if value is not None and len(found) < MAX_VARS:
                found[name] = (name, value, pos)
    for word, pos in tokens(text, start, at):
        hit = _NAME.match(word)
        if hit is None:
            break           # `srun VAR=1 x`: an argument, not bash's prefix assignment
        value = _value(hit.group(2), variables)
        if value is not None and len(found) < MAX_VARS:
            found[hit.group(1)] = (hit.group(1), value, pos)
    return list(found.values())


def _value(raw: str, variables: dict[str, str]) -> str | None:
    text = str(typed(raw, variables))    # numbers keep their text: "1" -> 1 -> "1"
    return None if "$" in text or "`" in text else text


def _function_spans(text: str) -> list[tuple[int, int]]:
    """Rough extents of ``f() { ... }`` bodies: what they export runs only if called."""
    spans = []
    for m in _FUNCTION.finditer(text):
        close = re.compile(r"(?m)^[ \t]*\}").search(text, m.end())
        spans.append((m.start(), close.end() if close else len(text)))
    return spans
