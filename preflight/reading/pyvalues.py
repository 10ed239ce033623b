"""The values a Python job file's calls are read into (:mod:`.pysource`): literals as they are,
:class:`Ref` for an imported name, :class:`Call` for a call with its arguments, :class:`Unresolved`
with the reason for what the text does not give; and the small syntax-tree helpers."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

MAX_DEPTH = 48
"""Nesting of expressions (and inlined functions) evaluated; deeper is Unresolved."""


@dataclass(frozen=True)
class Unresolved:
    """A value the file does not give without running it, and why."""

    reason: str
    line: int | None = None


@dataclass(frozen=True)
class Ref:
    """A name the file imports (or an attribute of one), qualified: ``torch.bfloat16``."""

    name: str

    @property
    def last(self) -> str:
        return self.name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Call:
    """One call the file makes: the callee qualified through the imports, its arguments'
    values and the line of each keyword (attributes set on the result afterwards count as
    keywords, at their own line)."""

    func: str
    line: int
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    star: Unresolved | None = None
    """A ``**mapping`` whose keys are not known: any keyword may be set there."""

    @property
    def name(self) -> str:
        return self.func.rsplit(".", 1)[-1]

    def value(self, key: str, default: Any = None) -> Any:
        """The keyword's value; :class:`Unresolved` when a ``**`` argument may set it."""
        if key in self.kwargs:
            return self.kwargs[key]
        return self.star if self.star is not None else default

    def with_set(self, path: tuple[str, ...], value: Any, line: int) -> Call:
        """This call with ``path`` (``("parallelism", "tp")``) set to ``value``."""
        head, rest = path[0], path[1:]
        if rest:
            inner = self.kwargs.get(head)
            if not isinstance(inner, Call):
                inner = Call("", line)
            value = inner.with_set(rest, value, line)
        return replace(self, kwargs={**self.kwargs, head: value},
                       lines={**self.lines, head: line})


@dataclass(frozen=True)
class Arg:
    """An argparse option (``parser.add_argument("--bf16", action="store_true")``)."""

    dest: str
    flags: tuple[str, ...]
    default: Any
    store: Any          # what a bare flag stores (store_true: True), None when it takes a value
    line: int


BUILTINS = frozenset({"int", "float", "str", "bool", "dict", "list", "tuple", "set", "len",
                       "range", "print", "open", "getattr", "isinstance", "super", "type"})


def typed(raw: str) -> Any:
    low = raw.strip("'\"")
    if low.lower() in ("true", "false"):
        return low.lower() == "true"
    for conv in (int, float):
        try:
            return conv(low)
        except ValueError:
            continue
    return low


def number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute) and len(parts) < MAX_DEPTH:
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def attr_path(node: ast.Attribute) -> tuple[str, ...] | None:
    name = dotted(node)
    return tuple(name.split(".")) if name else None


def is_main_guard(test: ast.expr) -> bool:
    """``if __name__ == "__main__":`` (the script's main path, not a condition)."""
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and \
        test.left.id == "__name__" and len(test.comparators) == 1 and \
        isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == "__main__"


def own_nodes(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of ``stmt`` outside nested statement bodies (those are walked on their own),
    iteratively (a deep expression must not exhaust the stack)."""
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        yield node
        for name, value in ast.iter_fields(node):
            if node is stmt and name in ("body", "orelse", "finalbody", "handlers", "cases"):
                continue
            if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef)) and node is not stmt:
                continue
            items = value if isinstance(value, list) else [value]
            todo.extend(v for v in items if isinstance(v, ast.AST))
