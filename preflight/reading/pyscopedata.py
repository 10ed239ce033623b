"""The records :mod:`.pyscopes` collects -- a binding (:class:`Bind`), a scope (:class:`Scope`) --
and the small parts of its walk that need no :class:`.pyscopes.Layout` (what a compound statement
binds, attribute sets hidden in ``setattr`` / ``__dict__``, ``global`` names, a ``case`` pattern
as a test). Split from pyscopes.py (at the 400-line limit)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from preflight.reading.pyguards import Guards


@dataclass(frozen=True)
class Bind:
    """``name = value`` at ``line``, under ``guards``; ``value`` None when the text gives no
    single expression for it (``a, b = f()``, ``x += 1``: ``why`` says which)."""

    value: ast.expr | None
    line: int
    guards: Guards = ()
    why: str = ""
    aug: ast.expr | None = None
    """``name += value`` / ``name |= value``: what is added (``why`` says how), for readers that
    follow a string or a dict built in steps (:mod:`.pyargs`)."""
    ref: str | None = None
    """An import inside a function: the qualified name it binds (``from te_mixtral_mxfp8 import
    TEMixtralMXFP8ForCausalLM as ForCausalLM`` in one ``if`` branch, another module's class in
    the other: which one the name is depends on the branch that runs)."""


@dataclass
class Scope:
    name: str
    body: list[ast.stmt]
    params: tuple[str, ...] = ()
    defaults: dict[str, ast.expr] = field(default_factory=dict)
    binds: dict[str, list[Bind]] = field(default_factory=dict)
    sets: dict[str, list[tuple[tuple[str, ...], ast.expr, int, Guards]]] = field(
        default_factory=dict)
    calls: list[ast.Call] = field(default_factory=list)
    call_guards: dict[int, Guards] = field(default_factory=dict)
    """The guards of each call (by ``id`` of its node) made under a condition."""
    returns: list[tuple[ast.expr, Guards]] = field(default_factory=list)
    items: dict[str, list[tuple[ast.expr, ast.expr, int, Guards]]] = field(default_factory=dict)
    """``name[key] = value`` statements: (key, value, line, guards) by name."""
    values: dict[str, Any] = field(default_factory=dict)   # parameters of an inlined call
    parent: Scope | None = None
    """The function whose body defines this one (its names are this one's closure), None at
    the top or in a class body (a method does not see its class's names)."""
    node: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    """The function's own statement (its decorators: :mod:`.pyclick`)."""

    def takes(self, name: str) -> bool:
        """Whether ``name`` is a parameter of the function, its ``**kwargs`` included."""
        return name in self.params or (self.node is not None and self.node.args.kwarg is not None
                                       and self.node.args.kwarg.arg == name)


def binders(stmt: ast.stmt) -> list[tuple[ast.AST, str]]:
    """The targets a compound statement binds besides ``=``: a loop's, ``with ... as``, a
    ``case`` pattern's captures, and names a function rebinds in the module (``global``)."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [(stmt.target, "a for loop")]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [(i.optional_vars, "a with statement") for i in stmt.items
                if i.optional_vars is not None]
    if isinstance(stmt, ast.Match):
        return [(c.pattern, "a match case") for c in stmt.cases]
    return []


def bind_compound(scope: Scope, stmt: ast.stmt, guards: Guards) -> None:
    """redteam7: ``for os in ...``, ``with ... as os``, ``case os:`` bind the name as an
    assignment does (``os.getenv`` after them is no longer the module's)."""
    for target, how in binders(stmt):
        for name in bound_names(target):
            scope.binds.setdefault(name, []).append(Bind(
                None, stmt.lineno, guards, f"{name} is bound by {how} (line {stmt.lineno})"))


def hidden_set(scope: Scope, node: ast.AST, guards: Guards, top: bool) -> None:
    """redteam11: ``setattr(obj, "attr", v)`` is ``obj.attr = v``; at a file's top level,
    ``setattr(obj, name, v)`` and ``obj.__dict__`` / ``vars(obj)`` written to change attributes
    the text does not name, so ``obj`` is no longer the object it was (an object shared with a
    job module, TE's te_llama ``hyperparams``: read as never changed, FP8 "no")."""
    name = None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "setattr" and len(node.args) == 3 and \
            isinstance(node.args[0], ast.Name):
        attr = node.args[1]
        if isinstance(attr, ast.Constant) and isinstance(attr.value, str) and \
                attr.value.isidentifier():
            scope.sets.setdefault(node.args[0].id, []).append(
                ((attr.value,), node.args[2], node.lineno, guards))
            return
        name = node.args[0].id
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in ("update", "setdefault", "__setitem__"):
        name = dict_of(node.func.value)
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
        name = dict_of(node.value)
    if name is not None and top and name not in ("self", "cls"):
        line = getattr(node, "lineno", 0)
        scope.binds.setdefault(name, []).append(Bind(
            None, line, guards, f"{name}'s attributes are changed at line {line} by names the "
            "text does not give"))


def dict_of(node: ast.expr) -> str | None:
    """``x`` of ``x.__dict__`` / ``vars(x)``."""
    if isinstance(node, ast.Attribute) and node.attr == "__dict__" and \
            isinstance(node.value, ast.Name):
        return node.value.id
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "vars" and len(node.args) == 1 and isinstance(node.args[0], ast.Name):
        return node.args[0].id
    return None


def bound_names(target: ast.AST) -> list[str]:
    """The plain names a target or ``case`` pattern binds (bounded)."""
    out: list[str] = []
    for count, node in enumerate(ast.walk(target)):
        if count > 256:
            break
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.append(node.id)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            out.append(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            out.append(node.rest)
    return out


def global_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """Names a function declares ``global`` (it may rebind them in the module)."""
    out: list[str] = []
    for count, node in enumerate(ast.walk(func)):
        if count > 20_000:
            break
        if isinstance(node, ast.Global):
            out.extend(node.names)
    return out


def case_test(subject: ast.expr, pattern: ast.pattern) -> ast.expr | None | bool:
    """A ``case`` pattern as the test it makes of ``subject``: ``case "megatron":`` is
    ``subject == "megatron"`` (``case "a" | "b":`` an ``or`` of them), ``case _:`` None (it
    always matches); False for a pattern that binds or tests a class (not decided here)."""
    if isinstance(pattern, ast.MatchValue):
        return ast.copy_location(ast.Compare(subject, [ast.Eq()], [pattern.value]), pattern)
    if isinstance(pattern, ast.MatchSingleton):
        return ast.copy_location(ast.Compare(subject, [ast.Is()], [ast.copy_location(
            ast.Constant(pattern.value), pattern)]), pattern)
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is None:
        return None
    if isinstance(pattern, ast.MatchOr) and len(pattern.patterns) <= 16:
        tests = [case_test(subject, p) for p in pattern.patterns]
        if all(isinstance(t, ast.expr) for t in tests):
            return ast.copy_location(ast.BoolOp(ast.Or(), [t for t in tests
                                                           if isinstance(t, ast.expr)]), pattern)
    return False


def ending(body: list[ast.stmt]) -> str:
    """``"return"`` / ``"raise"`` when a block's last statement ends it so, else ``""``."""
    last = body[-1] if body else None
    return "return" if isinstance(last, ast.Return) else "raise" if isinstance(
        last, ast.Raise) else ""


_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")


def import_fallback(stmt: Any, handler: ast.ExceptHandler) -> str:
    """The package a ``try`` imports when ``handler`` catches only its ImportError
    (``try: import transformer_engine.pytorch as te ... except ImportError: FP8_AVAILABLE =
    False``, holdout19 gpt2scratch src/train_fp8.py:32-37 @ c392292c), else ``""``: that handler
    runs only where the package is missing, which is the environment's fact, not the job's ask."""
    kind = handler.type
    names = kind.elts if isinstance(kind, ast.Tuple) else [kind] if kind is not None else []
    if not names or not all(isinstance(n, ast.Name) and n.id in _IMPORT_ERRORS for n in names):
        return ""
    for node in stmt.body[:64]:
        if isinstance(node, ast.Import) and node.names:
            return node.names[0].name
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            return node.module
    return ""


MUTATORS = frozenset({"append", "extend", "insert", "remove", "pop", "popitem", "clear", "update",
                      "setdefault", "add", "discard", "sort", "reverse", "__setitem__",
                      "__delitem__", "__iadd__", "__ior__", "difference_update",
                      "intersection_update", "symmetric_difference_update"})
"""Methods that change a list, dict or set in place."""


def mutated(scope: Scope, node: ast.AST, guards: Guards) -> None:
    """holdout23 scrollprize-villa gp3d/train.py:184-192: ``fragment_ids = []`` then
    ``fragment_ids.append(frag_id)`` in a ``for`` over ``glob.glob(...)`` was read as returning
    the empty list, so ``if not all_fragments: return`` pruned the Trainer. A name whose object a
    method changes in place (``xs.append(v)``, ``d.update(...)``, ``del xs[i]``) is bound again
    there to what the text does not give: a use after it is Unknown, never the first value."""
    line = getattr(node, "lineno", 0)
    names: list[tuple[str, str]] = []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in MUTATORS and isinstance(node.func.value, ast.Name):
        names.append((node.func.value.id, f".{node.func.attr}()"))
    elif isinstance(node, ast.Delete):
        names.extend((t.value.id, "del") for t in node.targets[:64]
                     if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name))
    for name, how in names:
        if name not in ("self", "cls"):
            scope.binds.setdefault(name, []).append(Bind(
                None, line, guards, f"{name} is changed in place by {how} (line {line})"))


__all__ = ["MUTATORS", "Bind", "Scope", "bind_compound", "binders", "bound_names",
           "case_test", "dict_of", "ending", "global_names", "hidden_set", "import_fallback",
           "mutated"]
