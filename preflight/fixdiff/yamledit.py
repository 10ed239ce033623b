"""YAML edits for ``check --diff`` from ruamel.yaml's round-trip node tree (issue 24, item 3).

ruamel.yaml composes the file into nodes that know where they start and end in the text; an
edit replaces exactly the span of the value it changes (a scalar keeps its quoting style),
removes exactly a key's lines (or its ``key: value`` inside a flow mapping), or inserts a new
key after the last key of its mapping at that mapping's indentation. Nothing else of the file is
rewritten, so comments, key order, quoting, anchors and blank lines stay as written (a full
``dump`` would re-indent lists and re-space values). Every edit is then proven by loading the
old and the new text with the project's YAML loader: the new document must equal the old one
with exactly that change, or the edit is refused.

ruamel.yaml is imported only here, under ``--diff`` (start-up of ``check`` is unaffected).
"""

from __future__ import annotations

from typing import Any

from preflight.fixdiff.common import EditError, Op, expect, scalar

_QUOTED = ("'", '"')


def _compose(text: str) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        node = YAML(typ="rt", pure=True).compose(text)
    except YAMLError as exc:
        raise EditError(f"ruamel.yaml cannot read it ({type(exc).__name__})") from None
    except RecursionError:
        raise EditError("nested too deeply to edit") from None
    if node is None or type(node).__name__ != "MappingNode":
        raise EditError("the document is not a mapping")
    return node


def _entries(node: Any) -> list[tuple[Any, Any]]:
    return [(k, v) for k, v in node.value if type(k).__name__ == "ScalarNode"]


def _is_map(node: Any) -> bool:
    return type(node).__name__ == "MappingNode"


def locate(text: str, path: tuple[str, ...], line: int | None) -> tuple[str, ...]:
    """The key path in the file of the fact ``path`` (the file may hold it under a prefix,
    such as a framework section): the entry whose key is ``path[-1]`` on ``line`` (1-based)
    when a line is known, else ``path`` itself."""
    if line is None:
        return path
    root = _compose(text)
    todo: list[tuple[Any, tuple[str, ...]]] = [(root, ())]
    while todo:
        node, at = todo.pop()
        for key, value in _entries(node):
            here = (*at, str(key.value))
            if key.start_mark.line + 1 == line and str(key.value) == path[-1]:
                if here[-len(path):] != path:
                    raise EditError(f"line {line} sets {'.'.join(here)}, not {'.'.join(path)}")
                return here
            if _is_map(value) and len(here) < 64:
                todo.append((value, here))
    raise EditError(f"no key {path[-1]!r} on line {line}")


def _walk(root: Any, path: tuple[str, ...]) -> tuple[list[Any], list[Any], Any | None]:
    """(mappings along ``path`` that exist, their keys (one fewer: the root has none), the
    value node of ``path`` or None). A part that exists but holds a null stops the walk with
    its key appended to the keys (``_add`` fills it); any other non-mapping is refused."""
    maps: list[Any] = [root]
    keys: list[Any] = []
    for i, part in enumerate(path):
        node = maps[-1]
        hit = next(((k, v) for k, v in _entries(node) if str(k.value) == part), None)
        if hit is None:
            return maps, keys, None
        key, value = hit
        if getattr(value, "anchor", None) or getattr(node, "anchor", None) or \
                type(value).__name__ == "AliasNode":
            raise EditError(f"{part!r} is in an anchored block: changing it would change "
                            "every alias of it")
        keys.append(key)
        if i == len(path) - 1:
            return maps, keys, value
        if not _is_map(value):
            if _is_null(value):
                return maps, keys, None
            raise EditError(f"{part!r} holds a value, not a mapping to add {path[-1]!r} to")
        maps.append(value)
    return maps, keys, None


def _is_null(node: Any) -> bool:
    return type(node).__name__ == "ScalarNode" and node.style is None and \
        node.value in ("", "~", "null", "Null", "NULL")


def apply(text: str, op: Op) -> str:
    """``text`` with ``op`` made (see the module docstring); :class:`EditError` otherwise."""
    root = _compose(text)
    maps, keys, value = _walk(root, op.path)
    if op.action == "delete":
        if value is None:
            raise EditError(f"{'.'.join(op.path)} is not in the file")
        new = _delete(text, maps, keys, value)
    elif value is not None:
        new = _set(text, keys[-1], value, op.value)
    elif len(keys) == len(maps):            # the walk stopped at a null: fill it
        new = _fill(text, maps, keys, op.path, op.value)
    else:
        new = _add(text, maps, op.path, op.value)
    expect(text, new, op, _load)
    return new


def _load(text: str) -> Any:
    from preflight.base import yamlsafe

    try:
        return yamlsafe.load(text).data
    except yamlsafe.YamlError as exc:
        raise EditError(f"the edited YAML does not load ({exc})") from None


def _set(text: str, key: Any, value: Any, new: Any) -> str:
    if type(value).__name__ != "ScalarNode" and not isinstance(new, list):
        raise EditError(f"{key.value!r} holds a block or list, not a value to replace")
    if type(value).__name__ == "SequenceNode" and not value.flow_style:
        return _drop_items(text, key, value, new)
    start, end = value.start_mark.index, value.end_mark.index
    if getattr(value, "style", None) in ("|", ">"):
        raise EditError(f"{key.value!r} holds a block scalar")
    if start == end:                      # `key:` with nothing after it
        colon = text.index(":", key.end_mark.index)
        return text[: colon + 1] + " " + scalar(new, "yaml") + text[colon + 1:]
    style = value.style if getattr(value, "style", None) in _QUOTED and isinstance(new, str) \
        else None
    return text[:start] + _styled(new, style) + text[end:]


def _drop_items(text: str, key: Any, seq: Any, new: Any) -> str:
    """A block list made ``new`` by taking out the ``- item`` lines of the items it lacks (the
    ``remove_item`` edit); any other change to a block list is refused."""
    items = list(seq.value)
    if not isinstance(new, list) or any(type(i).__name__ != "ScalarNode" for i in items):
        raise EditError(f"{key.value!r} holds a block list: not replaced as one value")
    old = [_load(f"v: {text[i.start_mark.index:i.end_mark.index]}\n")["v"] for i in items]
    drop, at = [], 0
    for value, item in zip(old, items):
        if at < len(new) and value == new[at]:
            at += 1
        else:
            drop.append(item)
    if at != len(new):
        raise EditError(f"{key.value!r} holds a block list: only items can be taken out of it")
    for item in reversed(drop):            # bottom up: the indexes above stay valid
        start = _line_start(text, item.start_mark.index)
        if text[start:item.start_mark.index].strip() != "-" or \
                "\n" in text[item.start_mark.index:item.end_mark.index]:
            raise EditError(f"{key.value!r}: an item shares its line or spans lines")
        text = text[:start] + text[_line_end(text, item.end_mark.index):]
    return text


def _styled(value: Any, style: str | None) -> str:
    """``value`` written as YAML, in the quoting style the old value had."""
    if style == "'" and "'" not in value and "\n" not in value:
        return f"'{value}'"
    if style == '"':
        import json

        return json.dumps(value, ensure_ascii=False)
    return scalar(value, "yaml")


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _line_end(text: str, index: int) -> int:
    end = text.find("\n", index)
    return len(text) if end < 0 else end + 1


def _last(node: Any) -> int:
    """The index just after the last character that belongs to ``node`` (a block's end mark
    lies at the next key, past blank lines and comments that belong to what follows)."""
    while type(node).__name__ in ("MappingNode", "SequenceNode") and not node.flow_style \
            and node.value:
        item = node.value[-1]
        node = item[1] if isinstance(item, tuple) else item
    return int(node.end_mark.index)


def _entry_end(text: str, key: Any, value: Any) -> int:
    """The index after the line that ends ``key: value`` (comment included)."""
    return _line_end(text, max(_last(value), key.end_mark.index) - 1)


def _delete(text: str, maps: list[Any], keys: list[Any], value: Any) -> str:
    mapping, key = maps[-1], keys[-1]
    if mapping.flow_style:
        return _delete_flow(text, mapping, key, value)
    start = _line_start(text, key.start_mark.index)
    if text[start:key.start_mark.index].strip():
        raise EditError(f"{key.value!r} shares its line with a list dash or another key: "
                        "not a plain key deletion")
    if len(_entries(mapping)) == 1:
        if len(keys) == 1:
            raise EditError(f"{key.value!r} is the file's only key")
        # the only key of a nested mapping: the parent keeps an empty mapping, not a null
        parent = keys[-2]
        colon = text.index(":", parent.end_mark.index)
        stop = _entry_end(text, key, value)
        return text[:colon + 1] + " {}\n" + text[stop:] if text[colon + 1:start].strip() == "" \
            else _refuse(key)
    return text[:start] + text[_entry_end(text, key, value):]


def _refuse(key: Any) -> str:
    raise EditError(f"{key.value!r}: its mapping shares a line with its parent key")


def _delete_flow(text: str, mapping: Any, key: Any, value: Any) -> str:
    start, stop = key.start_mark.index, value.end_mark.index
    after = text[stop:mapping.end_mark.index]
    before = text[mapping.start_mark.index:start]
    if after.lstrip().startswith(","):
        stop += len(after) - len(after.lstrip()) + 1
        stop += len(text[stop:]) - len(text[stop:].lstrip(" "))
    elif before.rstrip().endswith(","):
        start = mapping.start_mark.index + len(before.rstrip()) - 1
    return text[:start] + text[stop:]


def _indent_of(text: str, node: Any) -> str:
    start = _line_start(text, node.start_mark.index)
    return text[start:node.start_mark.index]


def _block(rest: tuple[str, ...], value: Any, lead: str, step: str) -> str:
    lines = []
    for depth, part in enumerate(rest):
        pad = lead + step * depth
        last = depth == len(rest) - 1
        lines.append(f"{pad}{part}: {scalar(value, 'yaml')}\n" if last else f"{pad}{part}:\n")
    return "".join(lines)


def _fill(text: str, maps: list[Any], keys: list[Any], path: tuple[str, ...],
          value: Any) -> str:
    """``parent:`` holding a null gets the missing keys as a block under it."""
    key = keys[-1]
    lead = _indent_of(text, key)
    if lead.strip():
        raise EditError(f"{key.value!r} starts on a list dash")
    colon = text.index(":", key.end_mark.index)
    at = _line_end(text, colon)
    body, hash_, comment = text[colon + 1:at].rstrip("\n").partition("#")
    if body.strip() not in ("", "~", "null", "Null", "NULL"):
        raise EditError(f"{key.value!r} holds a value on its line")
    head = text[:colon + 1] + (f" #{comment}" if hash_ else "") + "\n"
    step = _step(text, maps[0]) or "  "
    return head + _block(path[len(keys):], value, lead + step, step) + text[at:]


def _add(text: str, maps: list[Any], path: tuple[str, ...], value: Any) -> str:
    """Insert the missing part of ``path`` into the deepest mapping of it that exists."""
    mapping = maps[-1]
    rest = path[len(maps) - 1:]
    entries = _entries(mapping)
    if mapping.flow_style:
        item = f"{rest[-1]}: {scalar(value, 'yaml')}"
        for part in reversed(rest[:-1]):
            item = f"{part}: {{{item}}}"
        close = text.rfind("}", 0, mapping.end_mark.index)
        sep = ", " if entries else ""
        return text[:close] + sep + item + text[close:]
    if not entries:
        raise EditError("the mapping to add to is empty: no indentation to follow")
    lead = _indent_of(text, entries[0][0])
    if lead.strip():
        raise EditError("the mapping to add to starts on a list dash")
    step = _step(text, maps[0]) or "  "
    last_key, last_value = entries[-1]
    at = _entry_end(text, last_key, last_value)
    prefix = "" if at == 0 or text[at - 1] == "\n" else "\n"
    return text[:at] + prefix + _block(rest, value, lead, step) + text[at:]


def _step(text: str, root: Any) -> str | None:
    """The indentation step the file uses (from its first nested block mapping)."""
    todo = [root]
    while todo:
        mapping = todo.pop(0)
        for _, value in _entries(mapping):
            if _is_map(value) and not value.flow_style and _entries(value):
                inner = _indent_of(text, _entries(value)[0][0])
                outer = _indent_of(text, _entries(mapping)[0][0])
                if inner.startswith(outer) and len(inner) > len(outer) and not inner.strip():
                    return inner[len(outer):]
                todo.append(value)
    return None
