"""Where each ``fix.edits`` entry lands: the file and the key path in it, and the editor that
makes it (``--diff``, issue 24 item 3).

A fact the job sets is changed where its provenance says it was read (``file:line``). A fact it
does not set yet goes into the file of the same kind that holds its nearest sibling (the fact
sharing the longest key path): a new key of that mapping / table / object, or, in a launch
script, a new flag right after the sibling's flag. A config the launch line composes from
several files (``config.<kind>.layers``) is placed by :mod:`.layers`. ``config.<kind>.cli.*`` facts are launch-line
flags and go only into a launch script; a launch script takes only flat flags. The editors are
:mod:`.yamledit` (ruamel.yaml), :mod:`.tomledit` (tomlkit), :mod:`.jsonedit` and
:mod:`.shelledit`, each imported when a file of its format is edited.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from preflight.findings import EditSpec, Location
from preflight.fixdiff.common import EditError, Op


class FileSource(Protocol):
    def text(self, path: str) -> tuple[str, str]: ...


@dataclass(frozen=True)
class Placed:
    """One edit, placed: ``make(text) -> text`` on ``path``; ``line`` orders a file's edits
    from the bottom up (line-addressed editors stay valid)."""

    path: str
    line: int
    make: Callable[[str], str]


def split(fact: str) -> tuple[str, tuple[str, ...]]:
    parts = fact.split(".")
    if len(parts) < 3 or parts[0] != "config":
        raise EditError(f"{fact} is not a config fact")
    return parts[1], tuple(parts[2:])


def expand(spec: EditSpec, values: Any) -> list[EditSpec]:
    """``move`` (a renamed or relocated key, the value kept) as a delete and a set."""
    if spec.action != "move":
        return [spec]
    if spec.fact not in values:
        return []
    return [EditSpec(spec.fact, "delete"), EditSpec(str(spec.value), "set", values[spec.fact])]


def place(spec: EditSpec, facts: Any, files: FileSource) -> Placed | None:
    """The edit for ``spec``; None when there is nothing to do (already so, or not set)."""
    kind, path = split(spec.fact)
    values = facts.values
    from preflight.fixdiff.layers import layers_of, place_layered

    layers = layers_of(values.get(f"config.{kind}.layers"))
    if layers is not None:      # composed by the launch line from several files (.layers)
        return place_layered(spec, path, layers, facts, files, _maker)
    if spec.action == "remove_item":
        return _remove_items(spec, path, facts, files)
    if spec.fact in values:
        if spec.action in ("set", "replace") and values[spec.fact] == spec.value:
            return None
        loc = Location.from_source(facts.source(spec.fact))
        if loc is None:
            raise EditError("the file that sets it is not known")
        text, fmt = files.text(loc.path)
        action = "delete" if spec.action == "delete" else "set"
        up = spec.action == "delete" and spec.value == "parent"
        if up and (fmt == "shell" or len(path) < 2):
            raise EditError("only a key inside a block has a block to remove")
        return Placed(loc.path, loc.line or 0, _maker(fmt, text, action, path, spec.value,
                                                      loc.line, values[spec.fact], up))
    if spec.action in ("delete", "replace"):
        return None             # not set anywhere: nothing to remove or replace
    sib = _sibling(kind, path, facts, files)
    if sib is None and len(path) == 2 and path[0] == "cli":
        launched = _on_launch_line(kind, path[-1], spec.value, facts, files)
        if launched is not None:
            return launched
    if sib is None:
        raise EditError(f"no {kind} file read that could take it")
    sib_fact, loc, fmt = sib
    text, _ = files.text(loc.path)
    sib_path = split(sib_fact)[1]
    if fmt == "shell":
        flag, sib_flag, line = path[-1], sib_path[-1], loc.line or 0
        sib_value = values[sib_fact]

        def add(t: str) -> str:
            from preflight.fixdiff import shelledit

            return shelledit.add_flag(t, flag, line, sib_flag, spec.value, sib_value)
        return Placed(loc.path, line, add)
    prefix: tuple[str, ...] = ()
    if fmt == "yaml" and loc.line:
        from preflight.fixdiff import yamledit

        found = yamledit.locate(text, sib_path, loc.line)
        prefix = found[: len(found) - len(sib_path)]
    return Placed(loc.path, loc.line or 0,
                  _maker(fmt, text, "set", (*prefix, *path), spec.value, None, None))


def _remove_items(spec: EditSpec, path: tuple[str, ...], facts: Any, files: FileSource
                  ) -> Placed | None:
    """``remove_item``: the list the job wrote, less the items named, the others kept in their
    order (``--recompute-modules core_attn moe_act`` -> ``--recompute-modules core_attn``); made
    as a ``set`` of the shorter list, so each editor proves it the way it proves a set. Not set,
    or none of the items in it: nothing to do. A list that would be left empty is not edited:
    the framework's default list would apply, which may hold the very item (Megatron's
    --recompute-modules defaults to core_attn)."""
    current = facts.values.get(spec.fact)
    if current is None:
        return None
    if not isinstance(current, list):
        raise EditError("the job sets it to a single value, not a list")
    drop = spec.value if isinstance(spec.value, list) else [spec.value]
    kept = [item for item in current if item not in drop]
    if kept == current:
        return None
    if not kept:
        raise EditError(f"removing {', '.join(map(str, drop))} would leave it empty, and the "
                        "framework's default list would apply instead: choose what to keep")
    loc = Location.from_source(facts.source(spec.fact))
    if loc is None:
        raise EditError("the file that sets it is not known")
    text, fmt = files.text(loc.path)
    return Placed(loc.path, loc.line or 0, _maker(fmt, text, "set", path, kept, loc.line,
                                                  current))


def launch_commands(kind: str) -> tuple[tuple[str, ...], ...]:
    """The command words of ``kind``'s training launch line (``accelerate launch``), from its
    framework record (``Launch.trains``); none for a kind without one."""
    from preflight.frameworks import BY_KIND

    framework = BY_KIND.get(kind)
    launch = framework.launch if framework is not None else None
    return launch.trains if launch is not None else ()


def _on_launch_line(kind: str, flag: str, value: Any, facts: Any, files: FileSource
                    ) -> Placed | None:
    """A launch-line flag for a line that passes none of its kind's flags yet (``accelerate
    launch --config_file acc.yaml train.py``: ``--config_file`` is a pointer, not a setting):
    right after the command words. None where the job has no such line."""
    commands = launch_commands(kind)
    marker = f"config.{kind}.cli.launch"      # set by a reader on the line it read the launch
    if not commands or marker not in facts.values:
        return None
    loc = Location.from_source(facts.source(marker))
    if loc is None or not loc.line:
        return None
    _, fmt = files.text(loc.path)
    if fmt != "shell":
        return None
    line = loc.line

    def add(t: str) -> str:
        from preflight.fixdiff import shelledit

        return shelledit.add_after_command(t, flag, line, commands, value)
    return Placed(loc.path, line, add)


def _maker(fmt: str, text: str, action: str, path: tuple[str, ...], value: Any,
           line: int | None, current: Any, up: bool = False) -> Callable[[str], str]:
    """``text -> new text`` for one edit in a file of format ``fmt``; ``up``: the edit is on
    the block that holds ``path`` (``delete: parent``)."""
    if fmt == "shell":
        if not line:
            raise EditError("the line that passes it is not known")
        flag = path[-1]

        def shell(t: str) -> str:
            from preflight.fixdiff import shelledit

            if action == "delete":
                return shelledit.delete_flag(t, flag, line, current)
            return shelledit.set_flag(t, flag, line, value, current)
        return shell
    if fmt == "yaml":
        from preflight.fixdiff import yamledit

        where = yamledit.locate(text, path, line) if line else path
        where = where[:-1] if up else where
        return lambda t: yamledit.apply(t, Op(action, where, value, line))
    where = path[:-1] if up else path
    if fmt == "toml":
        from preflight.fixdiff import tomledit

        return lambda t: tomledit.apply(t, Op(action, where, value, line))
    if fmt == "json":
        from preflight.fixdiff import jsonedit

        return lambda t: jsonedit.apply(t, Op(action, where, value, line))
    raise EditError(f"not a format fp8-doctor edits ({fmt})")


def _sibling(kind: str, path: tuple[str, ...], facts: Any, files: FileSource
             ) -> tuple[str, Location, str] | None:
    """The fact of the same kind, read from a file that can take ``path``, sharing the longest
    key path with it: (its name, where it was read, the file's format)."""
    best: tuple[int, str, Location, str] | None = None
    prefix = f"config.{kind}."
    for name in sorted(facts.values):
        if not name.startswith(prefix) or name == "config.files":
            continue
        loc = Location.from_source(facts.source(name))
        if loc is None or not loc.line:
            continue
        try:
            text, fmt = files.text(loc.path)
        except (EditError, ValueError):
            continue
        other = split(name)[1]
        if fmt == "shell":
            from preflight.fixdiff import shelledit

            # flags are flat; config.<kind>.cli.* facts come only from the launch line; the
            # sibling must be a flag on its line (not a subcommand or a variable)
            if not (len(path) == 1 and len(other) == 1 or
                    len(path) == len(other) == 2 and path[0] == other[0] == "cli") or \
                    not shelledit.passes(text, loc.line, other[-1]):
                continue
        elif path[0] == "cli" or other[0] == "cli":
            continue
        common = 0
        while common < min(len(other), len(path)) - 1 and other[common] == path[common]:
            common += 1
        if best is None or common > best[0]:
            best = (common, name, loc, fmt)
    return None if best is None else (best[1], best[2], best[3])
