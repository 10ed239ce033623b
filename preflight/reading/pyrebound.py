"""Whether a module binds one of its own function or class names again (redteam12), for
:mod:`.pyfire`: ``fire.Fire(train)`` hands python-fire whatever ``train`` holds when the call
runs, so ``def train(...)`` followed by ``from helpers import train`` (or ``train = ...``, a
second ``def``, ``global train`` in a function that stores it) runs another callable than the
``def`` whose parameters the reader would bind. Read, never run: one pass over the tree, the
module's namespace only (a function's or class's own locals do not count, but a ``global``
name stored in a function does, as Python's symbol table has it:
https://docs.python.org/3.11/reference/executionmodel.html#naming-and-binding)."""

from __future__ import annotations

import ast
from typing import Any

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def rebound(tree: ast.Module, names: frozenset[str]) -> tuple[str, int] | None:
    """The first name of ``names`` the module binds other than by one ``def`` / ``class``, with
    the line of the other binding; None when each is bound once, by its definition."""
    if not names:
        return None
    defined: set[str] = set()
    for line, is_def, name in _found(tree, names):
        if not is_def or name in defined:
            return name, line
        defined.add(name)
    return None


def drop_shadowed(tree: ast.Module, defs: dict[str, Any]) -> None:
    """Remove from ``defs`` (the module's own classes or functions by name, each its first
    definition) each name bound again after that definition: ``class CastedLinear`` then
    ``from other import CastedLinear`` (or ``CastedLinear = ...``, a second ``class``) calls the
    later one, never the class read here (redfix12, redteam12's open item; a binding before
    the definition, ``try: from te import X`` / ``except: class X``, is replaced by it)."""
    first: dict[str, int] = {}
    for line, is_def, name in _found(tree, frozenset(list(defs)[:4096])):
        if name not in first and is_def:
            first[name] = line
        elif name in first:
            defs.pop(name, None)


def _found(tree: ast.Module, names: frozenset[str]) -> list[tuple[int, bool, str]]:
    """Every module-level binding of one of ``names``: (line, by a def / class, name), sorted."""
    if not names:
        return []
    found: list[tuple[int, bool, str]] = []
    # (node, whether it runs in the module's namespace, the names `global` in its function)
    stack: list[tuple[ast.AST, bool, frozenset[str]]] = [(tree, True, frozenset())]
    while stack:
        node, module_level, glob = stack.pop()
        # a def's name binds where the def stands; its body is its own scope
        found.extend((line, is_def, name) for name, line, is_def in _binds(node)
                     if name in names and (module_level or name in glob))
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _SCOPES):
                stack.append((child, module_level, glob))
                continue
            found.extend((line, is_def, name) for name, line, is_def in _binds(child)
                         if name in names and (module_level or name in glob))
            inner = frozenset() if isinstance(child, ast.ClassDef) else frozenset(
                n for g in ast.walk(child) if isinstance(g, ast.Global) for n in g.names)
            stack.extend((sub, False, inner) for sub in ast.iter_child_nodes(child))
    return sorted(found)


def _binds(node: ast.AST) -> list[tuple[str, int, bool]]:
    """The names ``node`` itself binds: (name, line, whether by a def / class)."""
    line = getattr(node, "lineno", 0)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [(node.name, line, True)]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [((a.asname or a.name).split(".")[0], line, False) for a in node.names]
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [(node.id, line, False)]
    return []


__all__ = ["drop_shadowed", "rebound"]
