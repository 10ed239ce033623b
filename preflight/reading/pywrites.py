"""Config files a Python launcher writes before it hands their path to the command it builds
(issue 22, holdout11: miles' and slime's launchers write the YAML a flag names), read as the
text they will hold, never by running anything.

THUDM/slime tests/test_glm4.7_30B_A3B_pd_mooncake.py (624b824a, l.30-54, 130) writes a dict with
``yaml.safe_dump(config, f)`` into ``tempfile.NamedTemporaryFile(...)`` and returns ``f.name``,
which becomes ``--sglang-config {path}``; a launcher may as well write a string
(``with open(path, "w") as f: f.write(text)``, ``Path(path).write_text(text)``) and pass
``path``. :func:`written` finds, in the file's text:

- ``with open(P, "w") as f:`` / ``with tempfile.NamedTemporaryFile("w", ...) as f:`` (also
  ``f = NamedTemporaryFile(...)`` then ``with f:``) whose body calls ``f.write(T)`` (in order)
  or ``yaml.dump`` / ``yaml.safe_dump`` / ``json.dump(D, f)``; ``Path(P).write_text(T)``;
- their content from :meth:`.pysource.Module.evaluate`: a string, or a mapping of known values
  dumped as YAML / JSON here (our own data, serialised safely).

A path written so, given to :data:`FLAG` on the command line (:func:`substitute`), and a call of
the file's function that returns such a temporary file's ``f.name`` (:func:`returned`), become
the inline ``base64:`` file miles reads (miles/utils/file_arg_utils.py ``resolve_file_arg``): its
content, for the reader of the flag (frameworks/slime_custom.py). A write in a branch the text
does not decide, a content not fully known, or two writes of one path that differ leave it
unknown. Bounded: :data:`MAX_WRITES` writes, :data:`.pyargs.MAX_CHARS` characters.
"""

from __future__ import annotations

import ast
import base64
import json
import re
import weakref
from typing import TYPE_CHECKING, Any

from preflight.reading.pyvalues import Call, Ref, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pyargs import Piece
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

MAX_WRITES = 32
MAX_TEXT = 256 * 1024
PSEUDO = "base64:"
_OPEN = frozenset({"builtins.open", "open", "io.open"})
_TEMP = frozenset({"tempfile.NamedTemporaryFile"})
_DUMP = {"yaml.dump": "yaml", "yaml.safe_dump": "yaml", "json.dump": "json"}


_DONE: weakref.WeakKeyDictionary[Module, tuple[dict[str, Any], dict[int, Any]]] = \
    weakref.WeakKeyDictionary()


def written(module: Module) -> tuple[dict[str, Any], dict[int, Any]]:
    """Paths the file writes with their text (or Unresolved), and the text of each temporary
    file by the ``id`` of the function scope that returns its ``f.name`` (once per module)."""
    if module not in _DONE:
        _DONE[module] = _written(module)
    return _DONE[module]


def _written(module: Module) -> tuple[dict[str, Any], dict[int, Any]]:
    paths: dict[str, Any] = {}
    temps: dict[int, Any] = {}
    count = 0
    for scope in module.scopes:
        for stmt in _statements(scope.body):
            if count >= MAX_WRITES:
                return paths, temps
            if isinstance(stmt, ast.With):
                for item in stmt.items:
                    got = _with(module, scope, item, stmt.body)
                    if got is None:
                        continue
                    count += 1
                    where, text = got
                    if isinstance(where, str):
                        _keep(paths, where, text)
                    elif where is _TEMP_NAME and _returns_name(scope, item, stmt):
                        temps[id(scope)] = text
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                got = _write_text(module, scope, stmt.value)
                if got is not None:
                    count += 1
                    _keep(paths, *got)
    return paths, temps


_TEMP_NAME = object()


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a scope's body, into its blocks but not into nested functions."""
    out: list[ast.stmt] = []
    todo = list(body)
    while todo and len(out) < 4096:
        stmt = todo.pop(0)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        out.append(stmt)
        for field in ("body", "orelse", "finalbody"):
            todo.extend(getattr(stmt, field, []) or [])
    return out


def _with(module: Module, scope: Scope, item: ast.withitem, body: list[ast.stmt],
          ) -> tuple[Any, Any] | None:
    target = item.optional_vars
    ctx = item.context_expr
    if isinstance(ctx, ast.Name) and target is None:       # f = NamedTemporaryFile(); with f:
        name, made = ctx.id, module.evaluate(ctx, scope)
    elif isinstance(target, ast.Name):
        name, made = target.id, module.evaluate(ctx, scope)
    else:
        return None
    if not isinstance(made, Call) or made.func not in _OPEN | _TEMP:
        return None
    if made.func in _OPEN:
        mode = made.args[1] if len(made.args) > 1 else made.kwargs.get("mode", "r")
        if not isinstance(mode, str) or "w" not in mode or not made.args:
            return None
        where: Any = made.args[0]
        if not isinstance(where, str):
            return None
    else:
        where = _TEMP_NAME
    return where, _content(module, scope, name, body)


def _content(module: Module, scope: Scope, name: str, body: list[ast.stmt]) -> Any:
    parts: list[str] = []
    for stmt in body:
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            continue
        node = stmt.value
        guards = scope.call_guards.get(id(node))
        state = module.runs(guards, scope) if guards else True
        if state is False:
            continue
        if isinstance(state, Unresolved):
            return Unresolved(f"written at line {node.lineno} {state.reason}", node.lineno)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "write" and \
                isinstance(func.value, ast.Name) and func.value.id == name and node.args:
            parts.append(module.evaluate(node.args[0], scope))
            continue
        called = module.evaluate(func, scope)
        kind = _DUMP.get(called.name) if isinstance(called, Ref) else None
        if kind and len(node.args) >= 2 and isinstance(node.args[1], ast.Name) and \
                node.args[1].id == name:
            parts.append(_dump(module.evaluate(node.args[0], scope), kind, node.lineno))
    if not parts:
        return Unresolved("the file is written by code not read here")
    bad = next((p for p in parts if not isinstance(p, str)), None)
    if bad is not None:
        return bad if isinstance(bad, Unresolved) else Unresolved("a content not known here")
    text = "".join(p for p in parts if isinstance(p, str))
    return text if len(text) <= MAX_TEXT else Unresolved("a content larger than any config")


def _dump(data: Any, kind: str, line: int) -> Any:
    if not _known(data, 0):
        return Unresolved(f"a mapping dumped at line {line} holds values not known here", line)
    if kind == "json":
        return json.dumps(data)
    import yaml  # imported on first use (PyYAML costs ~11 ms)

    return yaml.safe_dump(data, sort_keys=False)


def _known(value: Any, depth: int) -> bool:
    if depth > 16:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and _known(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(_known(v, depth + 1) for v in value)
    return isinstance(value, (str, int, float, bool, type(None)))


def _write_text(module: Module, scope: Scope, node: ast.Call) -> tuple[str, Any] | None:
    """``Path(P).write_text(T)`` / ``pathlib.Path(P).write_text(T)``."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "write_text" and node.args):
        return None
    made = module.evaluate(func.value, scope)
    if not (isinstance(made, Call) and made.func == "pathlib.Path" and made.args and
            isinstance(made.args[0], str)):
        return None
    guards = scope.call_guards.get(id(node))
    state = module.runs(guards, scope) if guards else True
    if state is False:
        return None
    text = module.evaluate(node.args[0], scope) if state is True else Unresolved(
        f"written at line {node.lineno} {state.reason}", node.lineno)
    return made.args[0], text


def _keep(paths: dict[str, Any], path: str, text: Any) -> None:
    if path in paths and paths[path] != text:
        paths[path] = Unresolved(f"{path[:80]} is written twice with different contents")
    else:
        paths[path] = text


def _returns_name(scope: Scope, item: ast.withitem, stmt: ast.With) -> bool:
    """Whether the function returns the temporary file's ``.name``."""
    target = item.optional_vars if isinstance(item.optional_vars, ast.Name) else \
        item.context_expr if isinstance(item.context_expr, ast.Name) else None
    return target is not None and any(
        isinstance(node, ast.Attribute) and node.attr == "name" and
        isinstance(node.value, ast.Name) and node.value.id == target.id
        for node, _ in scope.returns)


def inline(text: Any) -> str | None:
    """The ``base64:`` inline file of a known text."""
    if not isinstance(text, str):
        return None
    return PSEUDO + base64.b64encode(text.encode()).decode()


def returned(module: Module, node: ast.expr, line: int) -> Piece | None:
    """A call of the file's function that writes a temporary config and returns its name."""
    from preflight.reading.pyargs import Piece

    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
            node.func.id in module.functions):
        return None
    _, temps = written(module)
    scope = module.functions[node.func.id][1]
    if id(scope) not in temps:
        return None
    text = temps[id(scope)]
    coded = inline(text)
    if coded is None:
        why = text.reason if isinstance(text, Unresolved) else "a content not known here"
        return Piece(None, line, f"the config {node.func.id}() writes: {why}")
    return Piece(coded, line)


FLAG = "--custom-config-path"
"""The flag whose file is read for its content (frameworks/slime_custom.py)."""


def substitute(module: Module, found: list[Piece]) -> list[Piece]:
    """The path a :data:`FLAG` names, where the file writes it, as its inline file (a hole
    where the content is not known); other words stay as written."""
    from dataclasses import replace

    from preflight.reading.pyargs import Piece

    paths, _ = written(module)
    if not paths:
        return found
    out: list[Piece] = []
    before = ""
    for piece in found:
        text = piece.text
        if text is not None and text.strip():
            word = text.strip()
            if before == FLAG and word in paths:
                coded = inline(paths[word])
                content = paths[word]
                piece = replace(piece, text=text.replace(word, coded)) if coded else Piece(
                    None, piece.line, f"the config written to {word[:80]}: " + (
                        content.reason if isinstance(content, Unresolved) else "not known"),
                    piece.when)
            else:
                for path, content in paths.items():
                    coded = inline(content)
                    if coded and path in text:
                        pattern = rf"({re.escape(FLAG)}(?:\s+|=)){re.escape(path)}(?!\S)"
                        text = re.sub(pattern, r"\g<1>" + coded, text)
                if text != piece.text:
                    piece = replace(piece, text=text)
            before = word.split()[-1] if word else before
        out.append(piece)
    return out
