"""The environment a Python job file's top level leaves for what follows it (holdout19, sbhavani's
unsloth fork at 8cb627e8: examples/llama_8b_full_finetune_fp8.py:44 calls
``setup_fp8_mixed_precision_training(backend="te")``, a function of the job's own package,
unsloth/models/_utils.py:2427-2431, which sets ``os.environ["ACCELERATE_MIXED_PRECISION"] =
"fp8"`` and ``ACCELERATE_FP8_BACKEND``; a bare ``Accelerator()`` or a Trainer made afterwards
reads them: accelerate v1.11.0 state.py ``parse_choice_from_env("ACCELERATE_MIXED_PRECISION")``).

:func:`left` walks the file's top level in order, as the process runs it:

- ``os.environ[X] = v``, ``os.environ.update({...})`` / ``(X=v)``, ``setdefault`` (the value only
  where no launch line read gives ``X``), ``pop`` / ``del``: what ``X`` holds after it;
- a call, for its own sake or as an assignment's value, of a function of the file or of another
  file of the job (:attr:`.pyscopes.Layout.foreign`: ``from unsloth import f`` that
  ``unsloth/__init__.py`` takes from ``.models._utils``) is followed into its body with its
  parameters bound to that call's arguments (:func:`.pyforeign.bind`), so a branch on a
  parameter (``if backend.lower() != "te": raise``) is decided per call;
- an ``if`` the values decide runs its side; one they do not decide runs both and a variable the
  two sides leave differently is Unknown naming the test; a side that raises ends the run there
  and is not merged (the code after it runs only when it did not raise); a ``return`` ends the
  function on that side, merged at the function's end;
- a loop, a ``match``, an ``except`` handler, a key or value the text does not give, a function
  not followed that writes the environment: the variables written there are Unknown with why, and
  a write whose key is not known makes every variable not yet known Unknown (:attr:`Left.wild`).

The state the walk carries (:class:`Left`, :class:`Write`, :data:`UNSET`, :func:`merge`) is
:mod:`.pyenvleft`'s, re-exported here.

Bounded: :data:`MAX_STATEMENTS` statements, :data:`MAX_FOLLOW` nested calls, a function being
followed is not followed again (recursion between modules). Nothing is imported or run.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from preflight.findings import Source
from preflight.reading.pyenvleft import UNSET, Left, Write, env_text, merge
from preflight.reading.pyforeign import bind
from preflight.reading.pyguards import truth
from preflight.reading.pymain import main_test
from preflight.reading.pysig import misfit
from preflight.reading.pyvalues import Ref, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

MAX_STATEMENTS = 4_000
MAX_FOLLOW = 8
MAX_VARS = 256
_ENVIRON = ("os.environ", "posix.environ")


class _End(Exception):
    """The walk's bound was reached."""


class _Walk:
    def __init__(self, module: Module) -> None:
        self.module, self.steps, self.busy, self.top = module, 0, set[tuple[str, int]](), 0
        self.exits: list[list[Left]] = []

    # -- statements -----------------------------------------------------------------------

    def body(self, owner: Module, scope: Scope, stmts: list[ast.stmt], state: Left,
             ) -> Left | None:
        """``state`` after ``stmts``; None when they end the run (a raise) or the function (a
        return: its state kept in :attr:`exits`)."""
        for stmt in stmts:
            self.steps += 1
            if self.steps > MAX_STATEMENTS:
                raise _End
            got = self.statement(owner, scope, stmt, state)
            if got is None:
                return None
            state = got
        return state

    def statement(self, owner: Module, scope: Scope, stmt: ast.stmt, state: Left) -> Left | None:
        if isinstance(stmt, ast.Raise):
            return None
        if isinstance(stmt, ast.Return):
            if self.exits:
                self.exits[-1].append(state)
            return None
        if isinstance(stmt, ast.If):
            return self._if(owner, scope, stmt, state)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            return self.body(owner, scope, stmt.body, state)
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            return self._try(owner, scope, stmt, state)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                             ast.ImportFrom, ast.Pass, ast.Global, ast.Nonlocal)):
            return state
        if isinstance(stmt, (ast.Assign, ast.Delete, ast.Expr)):
            return self._simple(owner, scope, stmt, state)
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            return self._simple(owner, scope, ast.Assign([stmt.target], stmt.value,
                                                         lineno=stmt.lineno), state)
        if isinstance(stmt, ast.AugAssign):
            self._augmented(owner, scope, stmt, state)
            return state
        self._taint(owner, scope, stmt, state, f"line {stmt.lineno} ({type(stmt).__name__.lower()}"
                    ")")
        return state

    def _if(self, owner: Module, scope: Scope, stmt: ast.If, state: Left) -> Left | None:
        main = main_test(stmt.test)
        value = main if main is not None else truth(owner.evaluate(stmt.test, scope, 1))
        if value is not None:
            return self.body(owner, scope, stmt.body if value else stmt.orelse, state)
        sides = [self.body(owner, scope, b, state.copy()) for b in (stmt.body, stmt.orelse)]
        kept = [s for s in sides if s is not None]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else merge(kept, Source(owner.path, stmt.lineno),
                                                    f"the test at line {stmt.lineno}")

    def _try(self, owner: Module, scope: Scope, stmt: Any, state: Left) -> Left | None:
        got = self.body(owner, scope, stmt.body, state)
        if got is not None:
            got = self.body(owner, scope, stmt.orelse, got)
        for handler in stmt.handlers:
            # what an except clause changes holds only when the body failed: Unknown
            self._taint(owner, scope, handler, got or state, f"the except clause at line "
                        f"{handler.lineno}")
        if got is not None and stmt.finalbody:
            got = self.body(owner, scope, stmt.finalbody, got)
        return got

    def _simple(self, owner: Module, scope: Scope, stmt: Any, state: Left) -> Left | None:
        where = Source(owner.path, stmt.lineno)
        if isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Subscript) and self._environ(owner, scope, target.value):
                    self._set(state, owner.evaluate(target.slice, scope, 1), UNSET, where)
            return state
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Subscript) and self._environ(owner, scope, target.value):
                    self._set(state, owner.evaluate(target.slice, scope, 1),
                              env_text(owner.evaluate(stmt.value, scope, 1), stmt.lineno), where)
                elif isinstance(target, ast.Attribute) and self._environ(owner, scope, target):
                    state.wild = Unresolved(f"os.environ is replaced at line {stmt.lineno}",
                                            stmt.lineno)
                elif isinstance(target, (ast.Tuple, ast.List)):
                    # `os.environ["X"], n = ...`: unpacked at run time, not read here
                    self._taint(owner, scope, ast.Assign(list(target.elts), stmt.value),
                                state, f"the unpacking at line {stmt.lineno}")
        if isinstance(stmt.value, ast.Call):
            return self._call(owner, scope, stmt.value, state, where)
        return state

    def _call(self, owner: Module, scope: Scope, node: ast.Call, state: Left, where: Source,
              ) -> Left | None:
        func = node.func
        if isinstance(func, ast.Attribute) and self._environ(owner, scope, func.value):
            self._method(owner, scope, node, func.attr, state, where)
            return state
        callee = owner.evaluate(func, scope, 1)
        found = _function(owner, callee.name) if isinstance(callee, Ref) else None
        if found is None:
            self._unfollowed(owner, scope, func, state, node.lineno)
            return state
        helper, inner = found
        why = "it is decorated (the decorator may run anything in its place)" if getattr(
            inner.node, "decorator_list", None) else misfit(inner.node, node)
        if why is not None:     # (misfit: Python raises TypeError, the body never runs)
            self._taint(helper, inner, inner.node, state, f"{inner.name}() called at line "
                        f"{node.lineno}, where {why}")
            return state
        key = (helper.path, id(inner.node))
        if key in self.busy or len(self.busy) >= MAX_FOLLOW:
            self._taint(helper, inner, inner.node, state, f"{inner.name}() called at line "
                        f"{node.lineno} (not followed again)")
            return state
        values = bind(inner, node, lambda a: owner.evaluate(a, scope, 1),
                      lambda d: helper.evaluate(d, helper.module, 1))
        bound = replace(inner, values=values) if values is not None else inner
        if values is not None:
            helper.__dict__.setdefault("_kept", []).append(bound)   # its id stays its own
        self.busy.add(key)
        self.exits.append([])
        try:
            end = self.body(helper, bound, inner.body, state.copy())
        finally:
            self.busy.discard(key)
            exits = self.exits.pop()
        ends = [*exits, *([end] if end is not None else [])]
        if not ends:
            return None     # the function always raises: the run ends there
        return ends[0] if len(ends) == 1 else merge(ends, where, f"which return of "
                                                    f"{inner.name}() runs")

    def _method(self, owner: Module, scope: Scope, node: ast.Call, name: str, state: Left,
                where: Source) -> None:
        args = [owner.evaluate(a, scope, 1) for a in node.args[:2]]
        if name == "update" and not node.args and node.keywords:
            for k in node.keywords:
                self._set(state, k.arg, env_text(owner.evaluate(k.value, scope, 1), node.lineno),
                          where)
        elif name == "update" and len(node.args) == 1 and isinstance(args[0], dict):
            for key, value in list(args[0].items())[:MAX_VARS]:
                self._set(state, key, env_text(value, node.lineno), where)
            for k in node.keywords:     # (dict.update: the keywords after the mapping)
                self._set(state, k.arg, env_text(owner.evaluate(k.value, scope, 1), node.lineno),
                          where)
        elif name == "setdefault" and len(args) == 2:
            given = self.module.environ
            if isinstance(args[0], str) and args[0] in state.vars:
                return          # set above: setdefault keeps it
            if given is None or (isinstance(args[0], str) and any(
                    args[0] == k or (k.endswith("*") and args[0].startswith(k[:-1]))
                    for k in given)):
                self._set(state, args[0], Unresolved(
                    f"os.environ.setdefault at line {node.lineno} keeps a value the shell that "
                    "runs the script may give", node.lineno), where)
            else:
                self._set(state, args[0], env_text(args[1], node.lineno), where)
        elif name in ("pop", "__delitem__") and args:
            self._set(state, args[0], UNSET, where)
        elif name in ("get", "copy", "items", "keys", "values", "__getitem__", "__contains__"):
            return
        else:
            state.wild = Unresolved(f"os.environ.{name}() at line {node.lineno} changes the "
                                    "environment in a way the text does not give", node.lineno)

    def _augmented(self, owner: Module, scope: Scope, stmt: ast.AugAssign, state: Left,
                   ) -> None:
        """``os.environ["X"] += "y"`` (X from what it held), ``os.environ |= {...}``."""
        target, where = stmt.target, Source(owner.path, stmt.lineno)
        base = target.value if isinstance(target, ast.Subscript) else target
        if not (isinstance(base, ast.Attribute) and base.attr == "environ" or
                isinstance(base, ast.Name) and base.id == "environ"):
            return          # (by its text: `s += "..."` 5,000 times is evaluated nowhere)
        if isinstance(target, ast.Subscript) and self._environ(owner, scope, target.value):
            key = owner.evaluate(target.slice, scope, 1)
            old = state.vars.get(key) if isinstance(key, str) else None
            add = owner.evaluate(stmt.value, scope, 1)
            value = old.value + add if old is not None and isinstance(old.value, str) and \
                old.value != UNSET and isinstance(add, str) and isinstance(stmt.op, ast.Add) \
                else Unresolved(f"changed with {type(stmt.op).__name__} at line {stmt.lineno} "
                                "from a value the text does not give", stmt.lineno)
            self._set(state, key, value, where)
        elif self._environ(owner, scope, target):
            call = ast.Call(ast.Attribute(target, "update"), [stmt.value], [],
                            lineno=stmt.lineno)
            if isinstance(stmt.op, ast.BitOr):
                self._method(owner, scope, call, "update", state, where)
            else:
                state.wild = Unresolved(f"os.environ is changed at line {stmt.lineno}",
                                        stmt.lineno)

    def _unfollowed(self, owner: Module, scope: Scope, func: ast.expr, state: Left,
                    line: int) -> None:
        """A call not followed (a method, a nested function, a lambda) of a name some
        function of the file that writes the environment has: its writes are Unknown."""
        name = func.attr if isinstance(func, ast.Attribute) else \
            func.id if isinstance(func, ast.Name) else None
        for node in _writers(owner).get(name or "", ())[:8]:
            self._taint(owner, scope, node, state, f"{name}() called at line {line} (not "
                        "followed here)")

    # -- helpers --------------------------------------------------------------------------

    def _environ(self, owner: Module, scope: Scope, node: ast.expr) -> bool:
        value = owner.evaluate(node, scope, 1)
        return isinstance(value, Ref) and value.name in _ENVIRON

    def _set(self, state: Left, key: Any, value: str | Unresolved, where: Source) -> None:
        if not isinstance(key, str):
            state.wild = Unresolved(f"an environment variable whose name is computed when the "
                                    f"script runs is set at {where}", where.line)
            return
        if key in state.vars or len(state.vars) < MAX_VARS:
            state.vars[key] = Write(value, where, self.top)
        else:
            state.wild = Unresolved(f"more than {MAX_VARS} environment variables set",
                                    where.line)

    def _taint(self, owner: Module, scope: Scope, node: ast.AST | None, state: Left,
               what: str) -> None:
        """Every variable written (or through a followed call, possibly written) under ``node``
        is Unknown: it is set only in some runs (a loop, a handler, a case)."""
        if node is None:
            return
        for sub in ast.walk(node):
            target = sub.targets[0] if isinstance(sub, ast.Assign) and sub.targets else \
                sub.func if isinstance(sub, ast.Call) else None
            base = target.value if isinstance(target, (ast.Subscript, ast.Attribute)) else None
            if base is None or not self._environ(owner, scope, base):
                continue
            key = owner.evaluate(target.slice, scope, 1) if isinstance(target, ast.Subscript) \
                else owner.evaluate(sub.args[0], scope, 1) if isinstance(sub, ast.Call) and \
                sub.args and isinstance(target, ast.Attribute) and target.attr in (
                    "setdefault", "pop") else None
            line = getattr(sub, "lineno", None)
            self._set(state, key, Unresolved(f"set in {what}, which runs only in some runs",
                                             line), Source(owner.path, line))


def _writers(owner: Module) -> dict[str, list[ast.AST]]:
    """The file's functions and lambdas, at any depth, by name, whose text names
    ``environ`` (once per file)."""
    memo = owner.__dict__.get("_env_writers")
    if memo is None:
        memo = {}
        for node in ast.walk(owner.tree):
            fn, name = (node, node.name) if isinstance(node, (
                ast.FunctionDef, ast.AsyncFunctionDef)) else (node.value, node.targets[0].id) \
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda) and \
                isinstance(node.targets[0], ast.Name) else (None, "")
            if fn is not None and any(isinstance(n, ast.Attribute) and n.attr == "environ" or
                                      isinstance(n, ast.Name) and n.id == "environ"
                                      for n in ast.walk(fn)):
                memo.setdefault(name, []).append(fn)
        owner.__dict__["_env_writers"] = memo
    return memo


def _function(owner: Module, name: str) -> tuple[Module, Scope] | None:
    """The file and scope of the job's own function ``name`` names, None for any other."""
    if name.startswith("__main__.") and name[9:] in owner.functions:
        # (defined twice, or bound otherwise too: Python calls the last binding, not followed)
        once = sum(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name[9:]
                   for s in owner.tree.body) == 1 and name[9:] not in owner.module.binds
        return (owner, owner.functions[name[9:]][1]) if once else None
    found = owner.foreign(name) if owner.foreign is not None else None
    return None if found is None else (found[0], found[1])


def left(module: Module) -> Left:
    """The environment the top level of ``module`` leaves (module docstring)."""
    memo = module.__dict__.get("_env_left")
    if memo is not None:
        return memo     # type: ignore[no-any-return]
    walk, state = _Walk(module), Left()
    try:
        for index, stmt in enumerate(module.tree.body):
            walk.top = index
            got = walk.body(module, module.module, [stmt], state)
            if got is None:
                break       # the script stops here (a raise at its top)
            state = got
    except (_End, RecursionError):
        state.wild = Unresolved(f"more than {MAX_STATEMENTS} statements followed for the "
                                "environment the script sets")
    module.__dict__["_env_left"] = state
    return state


__all__ = ["UNSET", "Left", "Write", "left"]
