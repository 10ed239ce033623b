"""The values a Python job file's calls are read into (:mod:`.pysource`): literals as they are,
:class:`Ref` for an imported name, :class:`Call` for a call with its arguments, :class:`Unresolved`
with the reason for what the text does not give; and the small syntax-tree helpers. An argparse
option's value from a launch line is :mod:`.pyoption`'s."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from preflight.reading.pymain import is_main_guard, main_test  # noqa: F401 - re-exported

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
    when: Unresolved | None = None
    """The call is made under a condition the text does not decide (which, and why)."""
    path: str | None = None
    """The file it is written in, where that is another file of the job than the one read (a
    value passed in from the script that imports it: :mod:`preflight.jobs.pyimports`)."""

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


MAX_WEIGHT = 20000
"""Parts of one value (items, dict values, call arguments), each use of a shared part counted:
``v2 = [v1, v1]`` doubled 60 times is 2**60 parts that a report prints (redteam2: 26 s)."""


MAX_STEPS = 200_000
"""Values worked out in one file, in all (the most of a benchmark job, modded-nanogpt's
train_gpt.py: 52,000); past it each is Unresolved. redteam10: 1,500 functions each returning six
calls of the others were read for minutes, within every per-call bound (:data:`MAX_DEPTH`, the
inline and call-site caps)."""


class Weights:
    """The number of parts of each value built, worked out once per object (parts are shared),
    and the values worked out in all (:data:`MAX_STEPS`)."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[Any, int]] = {}   # the value is kept: its id stays its own
        self.steps = 0
        self.cut_at: int | None = None

    def spend(self, line: int | None) -> Unresolved | None:
        """One more value worked out; Unresolved past :data:`MAX_STEPS`."""
        self.steps += 1
        if self.cut_at is None and self.steps > MAX_STEPS:
            self.cut_at = line          # where the reading stopped, for the finding
        return None if self.steps <= MAX_STEPS else Unresolved(
            f"the file takes more than {MAX_STEPS:,} steps to follow: not read further", line)

    def weight(self, value: Any) -> int:
        if not isinstance(value, (list, dict, Call)):
            return 1
        got = self._seen.get(id(value))
        if got is not None and got[0] is value:
            return got[1]
        parts = value if isinstance(value, list) else value.values() \
            if isinstance(value, dict) else (*value.args, *value.kwargs.values())
        n = min(MAX_WEIGHT + 1, 1 + sum(self.weight(part) for part in parts))
        self._seen[id(value)] = (value, n)
        return n

    def bounded(self, value: Any, line: int | None) -> Any:
        """``value``, or Unresolved when it has more than :data:`MAX_WEIGHT` parts."""
        return value if self.weight(value) <= MAX_WEIGHT else Unresolved(
            f"a value of more than {MAX_WEIGHT} parts (the same list or call used over and "
            "over): not followed", line)


BUILTINS = frozenset("int float str bool dict list tuple set frozenset len range sorted min max "
                     "print open getattr isinstance super type".split())


def arith(op: ast.operator, left: Any, right: Any, line: int | None) -> Any:
    """``left op right`` for numbers (within 64 bits) and short strings, else Unresolved."""
    try:
        if number(left) and number(right):
            if isinstance(op, ast.Add):
                value = left + right
            elif isinstance(op, ast.Sub):
                value = left - right
            elif isinstance(op, ast.Mult):
                value = left * right
            elif isinstance(op, ast.FloorDiv):
                value = left // right
            elif isinstance(op, ast.Div):
                value = left / right
            else:
                raise ArithmeticError
            if abs(value) < 2 ** 63:
                return value
        if isinstance(left, str) and isinstance(right, str) and isinstance(op, ast.Add) and \
                len(left) + len(right) <= 4096:
            return left + right
    except (ArithmeticError, OverflowError):
        pass
    return Unresolved("computed when the script runs", line)


def dict_of(node: ast.Dict, evaluate: Callable[[ast.expr], Any], most: int) -> Any:
    """A dict display's value (``{**other}`` merged), keys the text gives as strings."""
    if len(node.keys) > most:
        return Unresolved(f"a dict of more than {most} items", node.lineno)
    out: dict[str, Any] = {}
    for key, value in zip(node.keys, node.values):
        if key is None:               # {**other}
            merged = evaluate(value)
            if not isinstance(merged, dict):
                return Unresolved("a dict merged from one the text does not give", node.lineno)
            out.update(merged)
            continue
        k = evaluate(key)
        if not isinstance(k, str):
            return Unresolved("a dict with keys computed when the script runs", node.lineno)
        out[k] = evaluate(value)
    return out


def fstring(node: ast.JoinedStr, evaluate: Callable[[ast.expr], Any]) -> Any:
    """An f-string whose parts the text gives (strings and numbers, no format spec), at most
    4096 characters; else Unresolved."""
    out: list[str] = []
    for part in node.values[:256]:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            out.append(part.value)
            continue
        value = evaluate(part.value) if isinstance(part, ast.FormattedValue) and \
            part.format_spec is None and part.conversion in (-1, 115) else None
        if isinstance(value, Unresolved):
            return value
        if not isinstance(value, (str, int, float)) or sum(map(len, out)) > 4096:
            return Unresolved("an f-string computed when the script runs", node.lineno)
        out.append(str(value))
    text = "".join(out)
    return text if len(node.values) <= 256 and len(text) <= 4096 else Unresolved(
        "an f-string computed when the script runs", node.lineno)


def keyword_once(kwargs: dict[Any, Any], name: Any, value: Any, line: int) -> Any:
    """``value`` of keyword ``name``; given twice (``f(**d, x=1)``, ``x`` in ``d``) Python raises
    TypeError, the call is never made (redteam15: the last one was read, FP8 "yes")."""
    return Unresolved(f"keyword {str(name)[:40]!r} given twice: the call raises TypeError",
                      line) if name in kwargs else value


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
