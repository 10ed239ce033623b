"""What the ``--diff`` editors share: the error, one edit operation, scalars as each format
writes them, and the proof every edit must pass (the document reloaded equals the old one with
exactly the intended change)."""

from __future__ import annotations

import copy
import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class EditError(ValueError):
    """The edit cannot be made on this text without guessing."""


@dataclass(frozen=True)
class Op:
    """One change inside one file: ``set`` ``path`` (keys in the file) to ``value``, or
    ``delete`` it; ``line`` (1-based) is where the reader saw it, when known."""

    action: str
    path: tuple[str, ...]
    value: Any = None
    line: int | None = None


_YAML_WORDS = ("true", "false", "yes", "no", "on", "off", "null", "none", "~", "y", "n")


def scalar(value: Any, fmt: str) -> str:
    """``value`` (a scalar or a list of scalars) as the format writes it."""
    if isinstance(value, list):
        if fmt == "shell":
            return " ".join(scalar(v, fmt) for v in value)
        return "[" + ", ".join(scalar(v, fmt) for v in value) + "]"
    if isinstance(value, bool):
        return ("True" if value else "False") if fmt == "python" else (
            "true" if value else "false")
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if fmt == "yaml":
        plain = re.fullmatch(r"[A-Za-z_][\w.\-/]*", text) and text.lower() not in _YAML_WORDS
        return text if plain else json.dumps(text, ensure_ascii=False)
    if fmt == "shell":
        return shlex.quote(text)
    return json.dumps(text, ensure_ascii=False)   # json and toml basic strings


def wanted(old: Any, op: Op) -> Any:
    """``old`` (a loaded document) with ``op`` made: what the edited file must load as."""
    doc = copy.deepcopy(old)
    node = doc
    for part in op.path[:-1]:
        if not isinstance(node, dict):
            raise EditError(f"{part!r} is inside a value that is not a mapping")
        if node.get(part) is None:
            node[part] = {}
        node = node[part]
    if not isinstance(node, dict):
        raise EditError(f"{op.path[-1]!r} would go inside a value that is not a mapping")
    if op.action == "delete":
        node.pop(op.path[-1], None)
    else:
        node[op.path[-1]] = op.value
    return doc


def expect(old_text: str, new_text: str, op: Op, load: Callable[[str], Any]) -> None:
    """Refuse the edit unless ``new_text`` loads as ``old_text`` with exactly ``op`` made."""
    if load(new_text) != wanted(load(old_text), op):
        raise EditError("the edit would change more than " + ".".join(op.path)
                        + ": not made")
