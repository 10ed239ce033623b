"""Safe YAML loading for rule files and job configs: no code, no bombs, no silent duplicates.

PyYAML's ``safe_load`` already refuses ``!!python/*`` tags, but it keeps the last of two duplicate
keys silently and happily builds a "billion laughs" document whose aliases expand to millions of
nodes once anything walks it. :func:`load` composes the node graph first, rejects duplicate keys
and oversized alias expansion with the line that caused it, then constructs plain data, and
returns the line of every mapping key so callers can give ``file:line`` provenance. Before any of
that, :func:`check_depth` refuses documents nested deeper than :data:`MAX_DEPTH`, which would
otherwise crash libyaml's composer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from preflight.base.keypaths import Path, nearest_line
from preflight.facts import MAX_NESTING

# libyaml's C parser is ~10x faster on large files; fall back to the pure-Python one.
_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_EXPANDED_NODES = 200_000
"""Alias expansion beyond this many nodes is refused (a real config has a few thousand)."""

MAX_EXPANDED_CHARS = 1024 * 1024
"""Characters of keys and scalars alias expansion may reach (counting nodes misses one long
string copied many times)."""

MAX_DEPTH = MAX_NESTING
"""Collections nested deeper than this are refused before composing. libyaml's C composer
recurses once per level with no limit, so ``[[[[...]]]]`` (or ``- - - -``, or indented block
mappings) some 30,000 deep kills the interpreter with SIGSEGV instead of raising; on a thread's
smaller stack far less is needed. Real rule files are about 12 deep, real configs fewer than 20."""



class YamlError(ValueError):
    """A YAML document that cannot be used; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


@dataclass(frozen=True)
class Loaded:
    """Plain data plus the 1-based line of each mapping key / sequence item, by path."""

    data: Any
    lines: dict[Path, int]
    duplicates: tuple[tuple[Path, int, int], ...] = ()
    """With ``load(..., keep_last=True)``: ``(key path, first line, later line)`` of each key
    given twice in one mapping (PyYAML keeps the later value)."""

    def line_of(self, path: Path) -> int | None:
        """Line of ``path`` or of its nearest ancestor that has one."""
        return nearest_line(self.lines, path)


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _check_graph(root: yaml.Node, lines: dict[Path, int],
                 dups: list[tuple[Path, int, int]] | None = None) -> None:
    """Reject duplicate keys and alias bombs; record key lines. Iterative: no recursion limit."""
    sizes: dict[int, int] = {}
    chars: dict[int, int] = {}     # characters of keys and scalars, aliases expanded
    # Post-order size computation with memoization per node identity: aliases point at the same
    # node object, so a bomb is detected in time linear in the *document*, not its expansion.
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    on_path: set[int] = set()
    while stack:
        node, done = stack.pop()
        nid = id(node)
        if done:
            on_path.discard(nid)
            if isinstance(node, yaml.MappingNode):
                size = 1 + sum(sizes.get(id(k), 1) + sizes.get(id(v), 1) for k, v in node.value)
                chars[nid] = sum(chars[id(k)] + chars[id(v)] for k, v in node.value)
            elif isinstance(node, yaml.SequenceNode):
                size = 1 + sum(sizes.get(id(v), 1) for v in node.value)
                chars[nid] = sum(chars[id(v)] for v in node.value)
            else:
                size = 1
                chars[nid] = len(node.value)
            sizes[nid] = size
            if size > MAX_EXPANDED_NODES:
                raise YamlError(
                    f"the document expands to more than {MAX_EXPANDED_NODES:,} nodes (aliases "
                    "of aliases, a 'billion laughs' document, or sheer size); refusing to load it",
                    _line(node))
            continue
        if nid in sizes:
            continue
        if nid in on_path:
            raise YamlError("recursive alias (a node that contains itself)", _line(node))
        on_path.add(nid)
        stack.append((node, True))
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if key.value in seen:
                        if dups is None:
                            raise YamlError(
                                f"duplicate key {key.value!r} (first at line "
                                f"{seen[key.value]}); YAML would silently keep only the last "
                                "one", _line(key))
                        dups.append(((key.value,), seen[key.value], _line(key)))
                    seen[key.value] = _line(key)
                stack.append((key, False))
                stack.append((value, False))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((v, False) for v in node.value)
    total = chars[id(root)]
    if total > MAX_EXPANDED_CHARS:
        line, under = _line(root), ""
        if isinstance(root, yaml.MappingNode) and root.value:
            key, _ = max(root.value, key=lambda kv: chars[id(kv[1])])
            line, under = _line(key), f"; most of it under {str(key.value)[:40]!r}"
        raise YamlError(f"aliases expand the document to {total:,} characters (more than "
                        f"{MAX_EXPANDED_CHARS:,}{under}); refusing to load it", line)


def _record_lines(node: yaml.Node, path: Path, lines: dict[Path, int], budget: list[int]) -> None:
    """Lines of keys by path (only the first time a node is reached; aliases are not re-walked)."""
    todo: list[tuple[yaml.Node, Path]] = [(node, path)]
    visited: set[int] = set()
    while todo and budget[0] > 0:
        cur, cur_path = todo.pop()
        if id(cur) in visited:
            continue
        visited.add(id(cur))
        budget[0] -= 1
        if isinstance(cur, yaml.MappingNode):
            for key, value in cur.value:
                if isinstance(key, yaml.ScalarNode):
                    kp = (*cur_path, key.value)
                    lines.setdefault(kp, _line(key))
                    todo.append((value, kp))
        elif isinstance(cur, yaml.SequenceNode):
            for i, value in enumerate(cur.value):
                ip = (*cur_path, i)
                lines.setdefault(ip, _line(value))
                todo.append((value, ip))


# What may precede the first token of a block collection on its own line: indentation, then
# compact indicators (``- - x``, ``- a: 1``, ``? x``, ``: x``, ``--- ``) and node properties
# (``&anchor``, ``!tag``). Generous on purpose: it only has to over-estimate.
_BLOCK_LEAD = re.compile(r"[ \t]*(?:(?:---|[-?:]|[&!]\S*)[ \t]+)*")


def check_depth(text: str, limit: int = MAX_DEPTH) -> None:
    """Refuse a document whose collections nest more than ``limit`` deep, naming the line.

    Cheap first: a sound upper bound on the depth, from the text alone, settles almost every
    file. Block collections nest only by moving right: along any chain of nested block
    collections the start column grows at least every second level (only a sequence under a
    mapping key may share its column), and a block collection starts at most where the leading
    indentation and indicators of its line end; flow collections cannot hold block ones and each
    needs its own ``[`` or ``{``. So depth <= 2 * (widest line lead + 1) + number of ``[`` / ``{``.
    Only when that bound is over ``limit`` are the parser's events counted, which is exact (no
    false refusal of a bracket inside a quoted string) and safe (libyaml's parser keeps its
    state on the heap; only the composer recurses).
    """
    flow = text.count("[") + text.count("{")
    if flow <= limit:
        # splitlines() breaks at every YAML line break (\r, \x85, \u2028 ...) and at a few more;
        # extra breaks only add line starts, so the bound stays an over-estimate.
        lead = max(((m.end() if (m := _BLOCK_LEAD.match(line)) else 0)   # always matches
                    for line in text.splitlines()), default=0)
        if 2 * (lead + 1) + flow <= limit:
            return
    _count_depth(text, limit)


def _count_depth(text: str, limit: int) -> None:
    """Exact check: walk the parser's events (no nodes are built) and stop past ``limit``.

    libyaml 0.2.5 as bundled in PyYAML 6.0.4 has a nesting limit of its own (1,000 levels) that
    its *scanner* enforces while it reads ahead for a possible simple key, so on ``[[[[...`` the
    C walk fails with libyaml's wording before a single event reaches our limit. Whatever a
    given PyYAML does, the promise is ours (our message, with the line): when the C walk fails,
    the pure-Python parser, which has no such limit and keeps its state on the heap, walks the
    text up to the failure point again. Invalid YAML fails there too, at or before that point,
    so the second walk costs no more than the part of the file already read."""
    loader = _BaseLoader(text)
    try:
        _walk_events(loader, limit)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        end = mark.index if mark is not None and mark.index is not None else len(text)
    except yaml.YAMLError:
        end = len(text)
    else:
        return
    finally:
        loader.dispose()
    if _BaseLoader is yaml.SafeLoader:
        return      # this walk was the pure-Python one already: loading reports the error
    slow = yaml.SafeLoader(text[: end + 1])
    try:
        _walk_events(slow, limit)
    except yaml.YAMLError:
        # Invalid YAML: loading reports it properly. The composer reads the same events in the
        # same order, so it fails at the same place, never deeper than this walk went.
        return
    finally:
        slow.dispose()


def _walk_events(loader: yaml.SafeLoader, limit: int) -> None:
    """Count collection depth over the parser's events; :class:`YamlError` past ``limit``."""
    depth = 0
    while loader.check_event():
        event = loader.get_event()
        cls = event.__class__
        if cls is yaml.SequenceStartEvent or cls is yaml.MappingStartEvent:
            depth += 1
            if depth > limit:
                raise YamlError(
                    f"collections nested more than {limit} deep (deeper than any real rule "
                    "or config); refusing to parse it", event.start_mark.line + 1)
        elif cls is yaml.SequenceEndEvent or cls is yaml.MappingEndEvent:
            depth -= 1


def load(text: str | bytes, *, keep_last: bool = False) -> Loaded:
    """Parse one YAML document safely. Raises :class:`YamlError` with a line number.

    ``keep_last``: a key given twice in one mapping is kept as PyYAML keeps it (the last value)
    and listed in ``Loaded.duplicates`` instead of being an error (job configs: the frameworks
    load them with PyYAML, issue 14)."""
    text = _decode(text)
    check_depth(text)  # after it, nothing below recurses deeper than MAX_DEPTH levels
    return _load(text, fast=True, dups=[] if keep_last else None)


def _decode(text: str | bytes) -> str:
    if isinstance(text, bytes):
        if b"\x00" in text[:8192]:
            raise YamlError("binary data, not YAML text")
        try:
            return text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise YamlError(f"not UTF-8 text (byte {exc.start})") from None
    return text


def _load(text: str | bytes, *, fast: bool,
          dups: list[tuple[Path, int, int]] | None = None) -> Loaded:
    text = _decode(text)
    loader = _BaseLoader(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            raise YamlError(_describe(exc), mark.line + 1 if mark else None) from None
        except yaml.YAMLError as exc:
            raise YamlError(str(exc).splitlines()[0]) from None
        if root is None:
            return Loaded(None, {})
        if fast and "&" not in text:
            # Without an anchor there can be no alias: the graph is a tree, so no bomb and no
            # cycle. One walk then checks keys, records lines and builds the data, which makes
            # loading a rule file about twice as fast; anything unusual falls back below.
            lines: dict[Path, int] = {(): _line(root)}
            try:
                data = _build_tree(loader, root, (), lines, [0], dups)
                return Loaded(data, lines, tuple(dups or ()))
            except _Fallback:
                if dups:
                    dups.clear()
        lines = {(): _line(root)}
        _check_graph(root, lines, dups)
        _record_lines(root, (), lines, [MAX_EXPANDED_NODES])
        try:
            data = loader.construct_document(root)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            raise YamlError(_describe(exc), mark.line + 1 if mark else None) from None
        except (yaml.YAMLError, TypeError, ValueError) as exc:
            raise YamlError(f"cannot construct value: {exc}") from None
        return Loaded(data, lines, tuple(dups or ()))
    finally:
        loader.dispose()


_TAG = "tag:yaml.org,2002:"
_PLAIN_SCALARS = frozenset(_TAG + t for t in ("null", "bool", "int", "float", "timestamp"))


class _Fallback(Exception):
    """The fast path met something it leaves to the full path (tags, merge keys, errors)."""


def _build_tree(loader: yaml.SafeLoader, node: yaml.Node, path: Path, lines: dict[Path, int],
                count: list[int], dups: list[tuple[Path, int, int]] | None = None) -> Any:
    """Plain data from an alias-free node tree, checking duplicate keys and recording key lines
    exactly as :func:`_check_graph` and :func:`_record_lines` do."""
    count[0] += 1
    if count[0] > MAX_EXPANDED_NODES:
        raise _Fallback  # the full path reports it
    cls, tag = node.__class__, node.tag
    if cls is yaml.ScalarNode:
        if tag == _TAG + "str":
            return node.value
        if tag not in _PLAIN_SCALARS:
            raise _Fallback
        try:
            return loader.yaml_constructors[tag](loader, node)
        except (yaml.YAMLError, TypeError, ValueError):
            raise _Fallback from None
    try:
        if cls is yaml.SequenceNode and tag == _TAG + "seq":
            items = []
            for i, item in enumerate(node.value):
                lines.setdefault((*path, i), _line(item))
                items.append(_build_tree(loader, item, (*path, i), lines, count, dups))
            return items
        if cls is yaml.MappingNode and tag == _TAG + "map":
            out: dict[Any, Any] = {}
            seen: dict[Any, int] = {}
            for key, value in node.value:
                if key.__class__ is not yaml.ScalarNode or key.tag == _TAG + "merge":
                    raise _Fallback
                line = _line(key)
                kp = (*path, key.value)
                if key.value in seen:
                    if dups is None:
                        raise YamlError(
                            f"duplicate key {key.value!r} (first at line {seen[key.value]}); "
                            "YAML would silently keep only the last one", line)
                    dups.append((kp, seen[key.value], line))
                    # the later value wins: its lines replace the earlier one's
                    for stale in [p for p in lines if p[:len(kp)] == kp]:
                        del lines[stale]
                seen[key.value] = line
                lines.setdefault(kp, line)
                out[_build_tree(loader, key, path, lines, count, dups)] = _build_tree(
                    loader, value, kp, lines, count, dups)
            return out
    except RecursionError:
        raise _Fallback from None
    raise _Fallback


def _describe(exc: yaml.MarkedYAMLError) -> str:
    parts = [p for p in (exc.context, exc.problem) if p]
    msg = "; ".join(parts) or "invalid YAML"
    if "could not determine a constructor" in msg:
        msg = f"{msg} (only plain YAML is accepted; language-specific tags are refused)"
    return msg
