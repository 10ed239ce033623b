"""Where things are in a Python job file (:mod:`.pysource`): its scopes (the module, each function
and class body), the names each binds and how (once, more than once, conditionally), the
attributes set on a name afterwards, its calls, returns and imports. Collected once, by walking
statements (expressions are walked iteratively, :func:`.pyvalues.own_nodes`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from preflight.reading.pyvalues import attr_path, is_main_guard, own_nodes

MAX_CALLS = 20_000
"""Calls looked at in one file."""


@dataclass
class Scope:
    name: str
    body: list[ast.stmt]
    params: tuple[str, ...] = ()
    defaults: dict[str, ast.expr] = field(default_factory=dict)
    binds: dict[str, list[tuple[ast.expr, int, bool]]] = field(default_factory=dict)
    sets: dict[str, list[tuple[tuple[str, ...], ast.expr, int, bool]]] = field(
        default_factory=dict)
    calls: list[ast.Call] = field(default_factory=list)
    returns: list[ast.expr] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)   # parameters of an inlined call


class Layout:
    """The scopes, functions, classes and imports of one parsed file."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.imports: dict[str, str] = {}
        self.functions: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope]] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.module = Scope("<module>", list(tree.body))
        self.scopes = [self.module]
        self._collect(self.module, tree.body, conditional=False, top=True)

    def _collect(self, scope: Scope, body: list[ast.stmt], conditional: bool, top: bool) -> None:
        for stmt in body:
            self._statement(scope, stmt, conditional, top)

    def _statement(self, scope: Scope, stmt: ast.stmt, conditional: bool, top: bool) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = stmt.args
            params = tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
            positional = (*args.posonlyargs, *args.args)
            defaults = {a.arg: d for a, d in zip(positional[len(positional) -
                                                             len(args.defaults):],
                                                 args.defaults)}
            defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults)
                             if d is not None})
            inner = Scope(stmt.name, list(stmt.body), params, defaults)
            self.scopes.append(inner)
            if top:
                self.functions.setdefault(stmt.name, (stmt, inner))
            self._collect(inner, stmt.body, conditional=False, top=False)
            return
        if isinstance(stmt, ast.ClassDef):
            if top:
                self.classes.setdefault(stmt.name, stmt)
            body = Scope(stmt.name, list(stmt.body))     # its own names: class attributes
            self.scopes.append(body)
            self._collect(body, stmt.body, conditional=False, top=False)
            return
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self._import(stmt)
        for node in own_nodes(stmt):
            if isinstance(node, ast.Call) and len(scope.calls) < MAX_CALLS:
                scope.calls.append(node)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                self._bind(scope, target, stmt.value, stmt.lineno, conditional)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            scope.binds.setdefault(stmt.target.id, []).append((stmt.value, stmt.lineno, True))
        elif isinstance(stmt, ast.Return) and stmt.value is not None and not conditional:
            scope.returns.append(stmt.value)
        elif isinstance(stmt, ast.If):
            main = is_main_guard(stmt.test)
            self._collect(scope, stmt.body, conditional or not main, top and main)
            self._collect(scope, stmt.orelse, True, False)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            self._collect(scope, stmt.body, True, False)
            self._collect(scope, stmt.orelse, True, False)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            self._collect(scope, stmt.body, conditional, top)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self._collect(scope, stmt.body, conditional, top)     # type: ignore[attr-defined]
            for handler in stmt.handlers:                         # type: ignore[attr-defined]
                self._collect(scope, handler.body, True, False)
            self._collect(scope, stmt.orelse, conditional, False)  # type: ignore[attr-defined]
            self._collect(scope, stmt.finalbody, conditional, False)  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.Match):
            for case in stmt.cases:
                self._collect(scope, case.body, True, False)

    def _bind(self, scope: Scope, target: ast.expr, value: ast.expr, line: int,
              conditional: bool) -> None:
        if isinstance(target, ast.Name):
            scope.binds.setdefault(target.id, []).append((value, line, conditional))
        elif isinstance(target, ast.Attribute):
            path = attr_path(target)
            if path is not None:
                root, *attrs = path
                scope.sets.setdefault(root, []).append((tuple(attrs), value, line, conditional))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:      # `a, b = f()`: each name bound to an unknown
                if isinstance(element, ast.Name):
                    scope.binds.setdefault(element.id, []).append((target, line, True))

    def _import(self, stmt: ast.Import | ast.ImportFrom) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self.imports[alias.asname] = alias.name
                else:
                    self.imports.setdefault(alias.name.split(".")[0], alias.name.split(".")[0])
            return
        base = "." * stmt.level + (stmt.module or "")
        for alias in stmt.names:
            if alias.name != "*":
                sep = "" if base.endswith(".") or not base else "."
                self.imports[alias.asname or alias.name] = f"{base}{sep}{alias.name}"

