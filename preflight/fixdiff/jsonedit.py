"""JSON edits for ``check --diff`` that keep key order, indentation and inline objects (issue
24, item 3). A small scanner records where each value starts and ends; an edit replaces one
value's span, removes one member (with its line when it has one, and the comma that went with
it), or adds a member after the last one of its object (on a new line at the members'
indentation, or inline in a one-line object). Every edit is proven by ``json.loads`` of old and
new text: the new document must equal the old one with exactly that change."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from preflight.fixdiff.common import EditError, Op, expect

MAX_DEPTH = 64
_WS = re.compile(r"[ \t\n\r]*")
_ATOM = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


@dataclass
class Node:
    start: int
    end: int = 0
    members: list[tuple[str, int, Node]] = field(default_factory=list)   # (key, key start, value)
    is_object: bool = False


def _value(text: str, i: int, depth: int) -> Node:
    if depth > MAX_DEPTH:
        raise EditError("nested too deeply to edit")
    i = _WS.match(text, i).end()  # type: ignore[union-attr]
    if i >= len(text):
        raise EditError("the JSON ends early")
    ch = text[i]
    if ch == "{":
        node = Node(i, is_object=True)
        j = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
        if text[j:j + 1] == "}":
            node.end = j + 1
            return node
        while True:
            j = _WS.match(text, j).end()  # type: ignore[union-attr]
            if text[j:j + 1] != '"':
                raise EditError("not JSON (a key is not a string)")
            key, k_end = scanstring(text, j + 1)
            k = _WS.match(text, k_end).end()  # type: ignore[union-attr]
            if text[k:k + 1] != ":":
                raise EditError("not JSON (no ':' after a key)")
            value = _value(text, k + 1, depth + 1)
            node.members.append((key, j, value))
            j = _WS.match(text, value.end).end()  # type: ignore[union-attr]
            if text[j:j + 1] == ",":
                j += 1
                continue
            if text[j:j + 1] == "}":
                node.end = j + 1
                return node
            raise EditError("not JSON (expected ',' or '}')")
    if ch == "[":
        node = Node(i)
        j = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
        if text[j:j + 1] == "]":
            node.end = j + 1
            return node
        while True:
            item = _value(text, j, depth + 1)
            j = _WS.match(text, item.end).end()  # type: ignore[union-attr]
            if text[j:j + 1] == ",":
                j += 1
                continue
            if text[j:j + 1] == "]":
                node.end = j + 1
                return node
            raise EditError("not JSON (expected ',' or ']')")
    if ch == '"':
        _, end = scanstring(text, i + 1)
        return Node(i, end)
    m = _ATOM.match(text, i)
    if not m:
        raise EditError(f"not JSON at offset {i}")
    return Node(i, m.end())


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise EditError(f"the JSON does not load ({type(exc).__name__})") from None


def apply(text: str, op: Op) -> str:
    _load(text)
    try:
        root = _value(text, 0, 0)
    except ValueError as exc:        # scanstring's own errors
        raise EditError(f"not JSON ({exc})") from None
    if not root.is_object:
        raise EditError("the document is not an object")
    parents = [root]
    for i, part in enumerate(op.path):
        hit = [m for m in parents[-1].members if m[0] == part]
        if len(hit) > 1:
            raise EditError(f"{part!r} is given twice")
        if not hit:
            if op.action == "delete":
                raise EditError(f"{'.'.join(op.path)} is not in the file")
            new = _add(text, parents[-1], op.path[i:], op.value)
            break
        if i == len(op.path) - 1:
            new = _delete(text, parents[-1], hit[0]) if op.action == "delete" else \
                text[:hit[0][2].start] + json.dumps(op.value) + text[hit[0][2].end:]
            break
        if not hit[0][2].is_object:
            raise EditError(f"{part!r} holds a value, not an object")
        parents.append(hit[0][2])
    expect(text, new, op, _load)
    return new


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def _delete(text: str, obj: Node, member: tuple[str, int, Node]) -> str:
    index = obj.members.index(member)
    start, end = member[1], member[2].end
    if index + 1 < len(obj.members):            # take the comma after it
        nxt = obj.members[index + 1][1]
        own_line = not text[_line_start(text, start):start].strip() and "\n" in text[end:nxt]
        if own_line:
            return text[:_line_start(text, start)] + text[_line_start(text, nxt):]
        return text[:start] + text[nxt:]
    if index > 0:                                # the last one: take the comma before it
        prev_end = obj.members[index - 1][2].end
        return text[:prev_end] + text[end:]
    return text[:obj.start + 1] + text[obj.end - 1:]   # the only one: {}


def _add(text: str, obj: Node, rest: tuple[str, ...], value: Any) -> str:
    item: Any = value
    for part in reversed(rest[1:]):
        item = {part: item}
    body = json.dumps(item, separators=(", ", ": "))
    if not obj.members:
        return text[:obj.start + 1] + f"{json.dumps(rest[0])}: {body}" + text[obj.end - 1:]
    last_key, last_start = obj.members[-1][0], obj.members[-1][1]
    last_end = obj.members[-1][2].end
    lead = text[_line_start(text, last_start):last_start]
    if "\n" in text[obj.start:obj.end] and not lead.strip():
        return text[:last_end] + f",\n{lead}{json.dumps(rest[0])}: {body}" + text[last_end:]
    del last_key
    return text[:last_end] + f", {json.dumps(rest[0])}: {body}" + text[last_end:]
