"""Where things are in a Python job file (:mod:`.pysource`): its scopes (the module, each function
and class body), the names each binds, the attributes set on a name afterwards, its calls,
returns and imports, each with the conditions it runs under (:class:`.pyguards.Guard`: ``if``
branches, what follows an ``if`` that returns, loops, ``except`` handlers, ``match`` cases).
Collected once, by walking statements (expressions are walked iteratively,
:func:`.pyvalues.own_nodes`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from preflight.reading import pysig
from preflight.reading.pyguards import Guard, Guards
from preflight.reading.pymain import is_main_guard, main_test
from preflight.reading.pyrebound import drop_shadowed
from preflight.reading.pyscopedata import (
    Bind,
    Scope,
    bind_compound,
    case_test,
    ending,
    global_names,
    hidden_set,
    import_fallback,
    mutated,
)
from preflight.reading.pyvalues import Ref, attr_path, own_nodes

MAX_CALLS = 20_000
"""Calls looked at in one file."""



class Layout:
    """The scopes, functions, classes and imports of one parsed file."""

    imported: Callable[[str], Any] | None = None
    """``helpers.CFG`` -> the value the job's own module ``helpers`` binds ``CFG`` to (set by
    :mod:`preflight.jobs.pyimports`: never imported, read; None: not a value of the job's)."""

    foreign: Callable[[str], Any] | None = None
    """``helpers.fn`` -> (the job module read, ``fn``'s scope, the names being followed, a
    function marking a value as written there) when ``fn`` is a function another file of the job
    defines (set by :mod:`preflight.jobs.pynames`; :mod:`.pyforeign`), else None."""

    def ref(self, qualified: str) -> Any:
        """What a name imported as ``qualified`` is: the value a job module gives it, else a
        :class:`Ref` (an installed package's name, a function, a class)."""
        got = self.imported(qualified) if self.imported is not None else None
        return Ref(qualified) if got is None else got

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.imports: dict[str, str] = {}
        self.stars: list[tuple[str, int]] = []
        """``from X import *`` at the top: (X, line) (its names: :mod:`.jobs.pyimports`)."""
        self.functions: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope]] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.owners: dict[int, tuple[str | None, str]] = {}
        """Each function scope of the file's own functions and methods (by ``id``): its class
        (None for a function) and its name."""
        self.methods: dict[tuple[str, str], Scope] = {}
        self._class_of: dict[int, str] = {}
        self.module = Scope("<module>", list(tree.body))
        self.scopes = [self.module]
        self._top_imports: list[tuple[str, Bind]] = []
        self._collect(self.module, tree.body, (), top=True)
        drop_shadowed(tree, self.classes)    # pyrebound: a later import or assignment wins
        # redteam8: `te = None` then `import transformer_engine.pytorch as te` (or the reverse):
        # the name is what the later statement binds, so a module-level import of a name the
        # module also assigns is one of its bindings, in statement order (likewise `class
        # DelayedScaling:` after `from transformer_engine... import DelayedScaling`: its own)
        kinds: dict[str, set[bool]] = {n: {False} for n in self.module.binds}
        for local, bind in self._top_imports:
            kinds.setdefault(local, set()).add(bind.ref is not None and
                                               not bind.ref.startswith("__main__."))
        # `if c: from a import M` / `else: from b import M` (pyfix8): each branch's import is a
        # binding under its condition, merged where the value is looked up (pylookup)
        refs: dict[str, set[str | None]] = {}
        for local, bind in self._top_imports:
            refs.setdefault(local, set()).add(bind.ref)
        branched = {local for local, bind in self._top_imports
                    if bind.guards and len(refs[local]) > 1}
        for local, bind in self._top_imports:
            if len(kinds[local]) > 1 or local in self.module.binds or local in branched:
                binds = self.module.binds.setdefault(local, [])
                binds.append(bind)
                binds.sort(key=lambda b: b.line)

    def _collect(self, scope: Scope, body: list[ast.stmt], guards: Guards, top: bool) -> None:
        for stmt in body:
            self._statement(scope, stmt, guards, top)
            if isinstance(stmt, (ast.Raise, ast.Return)):
                break   # what follows never runs: `raise X` then `return True` (redfix12)
            if isinstance(stmt, ast.If) and not is_main_guard(stmt.test):
                # `if c: return` / `if c: raise` -- what follows runs only when that branch
                # did not end the function (a raise: nor the run, so it is not merged)
                ends = [ending(b) for b in (stmt.body, stmt.orelse)]
                if bool(ends[0]) != bool(ends[1]):
                    raised = "raise" in ends
                    guards = (*guards, Guard(stmt.lineno, stmt.test, holds=bool(ends[1]),
                                             returns=not raised, raises=raised))

    def _defines(self, scope: Scope, name: str, line: int, guards: Guards,
                 qualified: str | None = None) -> None:
        """A module-level import, ``def`` or ``class`` of ``name`` (ordered against the module's
        assignments once all are known)."""
        if scope is self.module and len(self._top_imports) < MAX_CALLS:
            self._top_imports.append((name, Bind(None, line, guards,
                                                 ref=qualified or f"__main__.{name}")))

    def _statement(self, scope: Scope, stmt: ast.stmt, guards: Guards, top: bool) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = stmt.args
            params = tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
            defaults = pysig.defaults(args)
            inner = Scope(stmt.name, list(stmt.body), params, defaults, node=stmt,
                          parent=scope if scope.node is not None else None)
            for name in global_names(stmt)[:64]:
                self.module.binds.setdefault(name, []).append(Bind(
                    None, stmt.lineno, guards, f"{name} may be rebound by {stmt.name}() "
                    f"(`global {name}`, line {stmt.lineno})"))
            self.scopes.append(inner)
            self._defines(scope, stmt.name, stmt.lineno, guards)
            if top:
                self.functions.setdefault(stmt.name, (stmt, inner))
                self.owners[id(inner)] = (None, stmt.name)
            elif id(scope) in self._class_of:
                cls = self._class_of[id(scope)]
                self.owners[id(inner)] = (cls, stmt.name)
                self.methods.setdefault((cls, stmt.name), inner)
            self._collect(inner, stmt.body, (), top=False)
            return
        if isinstance(stmt, ast.ClassDef):
            self._defines(scope, stmt.name, stmt.lineno, guards)
            if top:
                self.classes.setdefault(stmt.name, stmt)
            inner = Scope(stmt.name, list(stmt.body))     # its own names: class attributes
            self.scopes.append(inner)
            if top:
                self._class_of[id(inner)] = stmt.name
            self._collect(inner, stmt.body, (), top=False)
            return
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for local, qualified in self._import(stmt):
                if scope is not self.module:
                    scope.binds.setdefault(local, []).append(Bind(
                        None, stmt.lineno, guards, ref=qualified))
                self._defines(scope, local, stmt.lineno, guards, qualified)
        bind_compound(scope, stmt, guards)
        for node in own_nodes(stmt):
            if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                scope.binds.setdefault(node.target.id, []).append(Bind(
                    node.value, node.lineno, guards))
            hidden_set(scope, node, guards, scope is self.module)
            mutated(scope, node, guards)
            if isinstance(node, ast.Call) and len(scope.calls) < MAX_CALLS:
                scope.calls.append(node)
                if guards:
                    scope.call_guards[id(node)] = guards
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                self._bind(scope, target, stmt.value, stmt.lineno, guards)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            scope.binds.setdefault(stmt.target.id, []).append(Bind(
                None, stmt.lineno, guards, f"{stmt.target.id} is changed in place (line "
                f"{stmt.lineno})", aug=stmt.value if isinstance(stmt.op, (ast.Add, ast.BitOr))
                else None))
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            scope.returns.append((stmt.value, guards))
        else:
            self._bodies(scope, stmt, guards, top)

    def _bodies(self, scope: Scope, stmt: ast.stmt, guards: Guards, top: bool) -> None:
        """The statements nested in a compound statement, each with the guards it runs under."""
        if isinstance(stmt, ast.If):
            main = main_test(stmt.test)      # `if __name__ != "__main__":` never runs
            if main is not False:
                self._collect(scope, stmt.body, guards if main else (
                    *guards, Guard(stmt.lineno, stmt.test, dead=ending(stmt.body) == "raise")),
                    top and bool(main))
            self._collect(scope, stmt.orelse, (*guards, Guard(
                stmt.lineno, stmt.test, False, dead=ending(stmt.orelse) == "raise")), False)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            loop = (*guards, Guard(stmt.lineno, loop=True, why=(
                f"set inside a loop (line {stmt.lineno}): its value after the loop is that of "
                "an iteration the text does not say")))
            self._collect(scope, stmt.body, loop, False)
            self._collect(scope, stmt.orelse, loop, False)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            self._collect(scope, stmt.body, guards, top)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self._collect(scope, stmt.body, guards, top)     # type: ignore[attr-defined]
            for handler in stmt.handlers:                    # type: ignore[attr-defined]
                missing = import_fallback(stmt, handler)
                self._collect(scope, handler.body, (*guards, Guard(handler.lineno, why=(
                    f"set in an `except` handler (line {handler.lineno}), which runs only if "
                    "the code before it fails" + (f" ({missing} not installed: an environment "
                                                  "fact)" if missing else "")),
                    dead=bool(missing), missing=missing)), False)
            self._collect(scope, stmt.orelse, guards, False)  # type: ignore[attr-defined]
            self._collect(scope, stmt.finalbody, guards, False)  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.Match):
            before: Guards = ()         # the cases above did not match
            for case in stmt.cases:
                test = case_test(stmt.subject, case.pattern)
                line = case.pattern.lineno
                mine = Guard(line, test) if isinstance(test, ast.expr) else None if \
                    test is None else Guard(line, why=(f"set in a `match` case (line {line}), "
                                                       "chosen when the script runs"))
                extra = (Guard(line, case.guard),) if case.guard is not None else ()
                self._collect(scope, case.body, (*guards, *before, *((mine,) if mine else ()),
                                                 *extra), False)
                if test is None and case.guard is None:
                    break                # `case _:` takes the rest
                both = test if case.guard is None else case.guard if test is None else \
                    ast.copy_location(ast.BoolOp(ast.And(), [test, case.guard]), case.guard) \
                    if isinstance(test, ast.expr) else False
                before = (*before, Guard(line, both, holds=False) if isinstance(
                    both, ast.expr) else Guard(line, why=(
                        f"after a `match` case (line {line}) chosen when the script runs")))

    def _bind(self, scope: Scope, target: ast.expr, value: ast.expr, line: int,
              guards: Guards) -> None:
        if isinstance(target, ast.Name):
            scope.binds.setdefault(target.id, []).append(Bind(value, line, guards))
        elif isinstance(target, ast.Attribute):
            path = attr_path(target)
            if path is not None:
                root, *attrs = path
                scope.sets.setdefault(root, []).append((tuple(attrs), value, line, guards))
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            scope.items.setdefault(target.value.id, []).append((target.slice, value, line,
                                                                guards))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:      # `a, b = f()`: each name bound to an unknown
                if isinstance(element, ast.Name):
                    scope.binds.setdefault(element.id, []).append(Bind(
                        None, line, guards, f"{element.id} is unpacked from a value computed "
                        f"when the script runs (line {line})"))

    def _import(self, stmt: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
        """The names ``stmt`` binds, qualified (also recorded file-wide in :attr:`imports`)."""
        bound: list[tuple[str, str]] = []
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self.imports[alias.asname] = alias.name
                    bound.append((alias.asname, alias.name))
                else:
                    top = alias.name.split(".")[0]
                    self.imports.setdefault(top, top)
                    bound.append((top, top))
            return bound
        base = "." * stmt.level + (stmt.module or "")
        for alias in stmt.names:
            if alias.name == "*":
                self.stars.append((base, stmt.lineno))
            else:
                sep = "" if base.endswith(".") or not base else "."
                self.imports[alias.asname or alias.name] = f"{base}{sep}{alias.name}"
                bound.append((alias.asname or alias.name, f"{base}{sep}{alias.name}"))
        return bound


__all__ = ["MAX_CALLS", "Bind", "Layout", "Scope"]
