"""TOML edits for ``check --diff`` with tomlkit, the style-preserving TOML library (issue 24,
item 3): a document parsed by tomlkit dumps back byte for byte, and a value set, a key removed
or a key added changes only its own line (a missing table is appended as a new ``[a.b]``
table). Every edit is proven by loading old and new text with ``tomllib``: the new document
must equal the old one with exactly that change, or it is refused.

tomlkit is imported only here, under ``--diff``."""

from __future__ import annotations

import sys
from typing import Any

from preflight.fixdiff.common import EditError, Op, expect


def _load(text: str) -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise EditError(f"the TOML does not load ({exc})") from None


def apply(text: str, op: Op) -> str:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    _load(text)                      # a file tomllib refuses is not edited
    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise EditError(f"tomlkit cannot read it ({type(exc).__name__})") from None
    if tomlkit.dumps(doc) != text:
        raise EditError("tomlkit does not write this file back as it was")
    node: Any = doc
    for i, part in enumerate(op.path[:-1]):
        if part not in node:
            if op.action == "delete":
                raise EditError(f"{'.'.join(op.path)} is not in the file")
            node = _add_tables(doc, node, op.path, i, op.value)
            break
        node = node[part]
        if not hasattr(node, "keys"):
            raise EditError(f"{part!r} holds a value, not a table")
    else:
        key = op.path[-1]
        if op.action == "delete":
            if key not in node:
                raise EditError(f"{'.'.join(op.path)} is not in the file")
            del node[key]
        else:
            if key in node and hasattr(node[key], "keys"):
                raise EditError(f"{key!r} is a table, not a value")
            node[key] = op.value
    new = tomlkit.dumps(doc)
    expect(text, new, op, _load)
    return new


def _add_tables(doc: Any, node: Any, path: tuple[str, ...], at: int, value: Any) -> Any:
    """Add the tables ``path[at:-1]`` below ``node`` (super tables on the way, so the new
    table is written as ``[a.b.c]``) holding ``path[-1] = value``."""
    import tomlkit

    leaf = tomlkit.table()
    leaf[path[-1]] = value
    inner: Any = leaf
    for part in reversed(path[at + 1:-1]):
        outer = tomlkit.table(is_super_table=True)
        outer[part] = inner
        inner = outer
    node[path[at]] = inner
    return leaf
