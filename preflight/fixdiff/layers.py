"""``--diff`` into a config composed from several files by its launch line (prime-rl's ``uv run
rl @ a.toml @ b.toml --trainer @ t.toml --x.y z``, frameworks/prime_rl_launch.py): the reader
states the composition as ``config.<kind>.layers``, each ``{section, path}`` in the order the
files are merged (``path`` empty for one not read: outside the job, not found, decided at run
time), and an edit goes into the file that owns the key:

- a key a file sets: the last file that sets it (the fact's provenance: later files and the
  command line win, pydantic-config's "Sources and Precedence"), at its path in that file (a
  ``--trainer @ t.toml`` file holds ``trainer.model.impl`` as ``[model] impl``);
- a key no file sets: the last file whose section can hold it (``@ x`` any key, ``--trainer @
  x`` a ``trainer.*`` one), in the table it belongs to (tomlkit adds ``[trainer.model]`` or
  a key of the table that is there: :mod:`.tomledit`);
- refused, with the reason, when the key is set on the command line (the override wins over
  every file: the launch line is the place to change it, not a file), when a file not read
  comes after the one to edit (it may set the key), when the file is outside the job you named
  (:mod:`.safety`) or is composed twice under different sections.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from preflight.findings import EditSpec, Location
from preflight.fixdiff.common import EditError

if TYPE_CHECKING:
    from preflight.fixdiff.place import Placed

Layer = tuple[str, str]          # (section, path: "" when not read)


def layers_of(value: Any) -> list[Layer] | None:
    """The ``config.<kind>.layers`` fact as (section, path) pairs; None when it is not one."""
    if not isinstance(value, list):
        return None
    out: list[Layer] = []
    for item in value[:64]:
        if not isinstance(item, dict) or not isinstance(item.get("section"), str) or \
                not isinstance(item.get("path"), str):
            return None
        out.append((item["section"], item["path"]))
    return out


def _same(a: str, b: str) -> bool:
    return bool(a and b) and os.path.realpath(a) == os.path.realpath(b)


def _inner(path: tuple[str, ...], section: str) -> tuple[str, ...] | None:
    """``path`` as the file composed under ``section`` writes it; None: that file cannot hold it."""
    parts = tuple(section.split(".")) if section else ()
    if path[:len(parts)] != parts or len(path) <= len(parts):
        return None
    return path[len(parts):]


def _unread_after(layers: Sequence[Layer], at: int, path: tuple[str, ...]) -> str | None:
    """Why a file after layer ``at`` that could set ``path`` was not read, or None."""
    for section, name in layers[at + 1:]:
        if not name and _inner(path, section) is not None:
            return ("an @ file after it was not read (outside the job, not found, or named "
                    "only when the script runs) and may set it")
    return None


def place_layered(spec: EditSpec, path: tuple[str, ...], layers: Sequence[Layer], facts: Any,
                  files: Any, maker: Callable[..., Callable[[str], str]]) -> Placed | None:
    """The :class:`.place.Placed` edit of ``spec`` in the composed config (None: nothing to
    do); :class:`EditError` with the reason when it cannot be placed without guessing."""
    from preflight.fixdiff.place import Placed

    values = facts.values
    if spec.action not in ("set", "replace", "delete"):
        raise EditError(f"a {spec.action} in a config composed from @ files is not made here")
    if spec.fact in values:
        if spec.action in ("set", "replace") and values[spec.fact] == spec.value:
            return None
        loc = Location.from_source(facts.source(spec.fact))
        if loc is None:
            raise EditError("the file that sets it is not known")
        at = [i for i, (_, name) in enumerate(layers) if _same(name, loc.path)]
        if not at:
            text, fmt = files.text(loc.path)
            if fmt == "shell":
                raise EditError(f"it is set on the launch line (line {loc.line}), which wins "
                                "over every @ file: change or drop the flag there")
            raise EditError("the file that sets it is not one of the @ files composed")
        if len({layers[i][0] for i in at}) > 1:
            raise EditError("the file that sets it is composed twice, under different sections")
        section = layers[at[-1]][0]
        inner = _inner(path, section)
        why = _unread_after(layers, at[-1], path)
        if inner is None or why is not None:
            raise EditError(why or "the file that sets it is composed under another section")
        text, fmt = files.text(loc.path)
        action = "delete" if spec.action == "delete" else "set"
        return Placed(loc.path, loc.line or 0,
                      maker(fmt, text, action, inner, spec.value, loc.line, values[spec.fact]))
    if spec.action in ("delete", "replace"):
        return None              # not set anywhere: nothing to remove or replace
    for i in range(len(layers) - 1, -1, -1):
        section, name = layers[i]
        inner = _inner(path, section)
        if inner is None:
            continue
        if not name:
            raise EditError("the last @ file that could take it was not read (outside the "
                            "job, not found, or named only when the script runs)")
        text, fmt = files.text(name)
        return Placed(name, 0, maker(fmt, text, "set", inner, spec.value, None, None))
    raise EditError("no @ file composed could take it")
