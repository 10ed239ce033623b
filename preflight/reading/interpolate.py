"""``${...}`` interpolation as OmegaConf does it (llm-foundry and NeMo/Hydra YAML), bounded.

llm-foundry and NeMo load their YAML with OmegaConf, so ``${variables.x}`` / ``${model.x}`` and
relative ``${.x}`` / ``${..x}`` are resolved before anything reads a value; we resolve the same
references. Resolver calls (``${oc.env:X}``) and references that cannot be resolved stay as
written (the job would fail on them too); so does a reference cycle (OmegaConf raises on it).

Each string is resolved once (memoised by its key path), so a reference used many times costs
nothing more. The output is bounded: a 1 KB file whose strings reference each other ten times
over, six levels deep, expands to megabytes (it took 6 s; nine levels did not finish in 60 s).
More than :data:`MAX_EXPANDED` characters of resolved text is a :class:`ParseError` at the line
of the key being resolved.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from preflight.reading.parse import MAX_BYTES, ParseError

MAX_EXPANDED = MAX_BYTES
"""Characters of resolved text a document may expand to: no more than the largest file read
(a real config resolves to kilobytes; every character is later flattened, redacted, rendered)."""

_REF = re.compile(r"\$\{(\.*[A-Za-z_][\w.]*)\}")
_MAX_DEPTH = 64       # a chain of references deeper than this stays literal (stack safety)

Where = tuple[str, ...]
_PENDING = object()
_MISSING = object()


class _TooLarge(Exception):
    pass


class _Resolver:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.memo: dict[Where, Any] = {}
        self.spent = 0
        self.where: tuple[Any, ...] = ()      # key path being resolved, for the error's line

    def charge(self, n: int) -> None:
        self.spent += n
        if self.spent > MAX_EXPANDED:
            raise _TooLarge

    def lookup(self, ref: str, base: Where) -> tuple[bool, Any, Where]:
        """Follow ``ref`` (absolute ``a.b`` or OmegaConf-relative ``.a`` / ``..a``) from ``base``,
        the path of the mapping holding the reference; (found, value, full path of the value)."""
        dots = len(ref) - len(ref.lstrip("."))
        if dots:
            if dots - 1 > len(base):
                return False, None, ()
            start: Where = base[:len(base) - (dots - 1)]
        else:
            start = ()
        full = (*start, *(p for p in ref[dots:].split(".") if p))
        node: Any = self.root
        for part in full:
            if not isinstance(node, dict) or part not in node:
                return False, None, ()
            node = node[part]
        return True, node, full

    def target(self, ref: str, base: Where, depth: int) -> tuple[bool, Any]:
        """The resolved value ``ref`` points at (strings resolved in their own mapping)."""
        found, value, full = self.lookup(ref, base)
        if not found or not isinstance(value, str):
            return found, value
        done = self.memo.get(full, _MISSING)
        if done is _PENDING or depth > _MAX_DEPTH:
            return False, None      # a cycle, or a chain too deep: left as written
        if done is _MISSING:
            self.memo[full] = _PENDING
            done = self.string(value, full[:-1], depth + 1)
            self.memo[full] = done
        return True, done

    def string(self, value: str, base: Where, depth: int) -> Any:
        if "${" not in value:
            return value
        whole = _REF.fullmatch(value)
        if whole:
            found, target = self.target(whole.group(1), base, depth)
            return target if found else value

        def sub(m: re.Match[str]) -> str:
            found, target = self.target(m.group(1), base, depth)
            if not found or isinstance(target, (dict, list)):
                return m.group(0)
            text = str(target)
            self.charge(len(text))
            return text

        return _REF.sub(sub, value)

    def walk(self, data: Any, base: Where, where: tuple[Any, ...]) -> Any:
        if isinstance(data, dict):
            return {k: self.walk(v, (*base, str(k)), (*where, k)) if isinstance(v, (dict, list))
                    else self.leaf(v, base, (*where, k), (*base, str(k)))
                    for k, v in data.items()}
        if isinstance(data, list):
            # an item's relative references count from the mapping that holds the list
            return [self.walk(v, base, (*where, i)) if isinstance(v, (dict, list))
                    else self.leaf(v, base, (*where, i)) for i, v in enumerate(data)]
        return self.leaf(data, base, where)

    def leaf(self, value: Any, base: Where, where: tuple[Any, ...],
             full: Where | None = None) -> Any:
        if not isinstance(value, str):
            return value
        self.where = where
        out = self.memo.get(full, _MISSING) if full is not None else _MISSING
        if out is _MISSING or out is _PENDING:
            out = self.string(value, base, 0)
            if full is not None:
                self.memo[full] = out
        if isinstance(out, str) and out is not value:
            self.charge(len(out))    # every use of a long string counts: it is output each time
        return out


def resolve(data: Any, line_of: Callable[[tuple[Any, ...]], int | None] | None = None) -> Any:
    """A copy of ``data`` (the whole document) with every string interpolation resolved.

    Raises :class:`ParseError` (at ``line_of(key path)``) when the resolved strings would exceed
    :data:`MAX_EXPANDED` characters.
    """
    if not isinstance(data, dict):
        return data
    resolver = _Resolver(data)
    try:
        return resolver.walk(data, (), ())
    except _TooLarge:
        line = line_of(resolver.where) if line_of else None
        raise ParseError(f"`${{...}}` interpolation expands to more than {MAX_EXPANDED:,} "
                         "characters (references that repeat other references); refusing to "
                         "resolve it", line) from None
