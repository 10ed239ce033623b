"""Python job files read by their syntax tree: parsed with :func:`ast.parse`, never imported or
executed (issue 22 item 1).

A training script sets FP8 in code (``TrainingArguments(bf16=True)``, ``Accelerator(
mixed_precision="fp8")``, ``te.autocast(recipe=DelayedScaling())``). This module turns a file
into :class:`Call` records, one per call the file makes, with each argument's value as far as
it can be known without running anything:

- literals, lists, tuples, dicts (``**`` of a literal dict merged), ``dict(a=1)``, small integer
  arithmetic (``8 * 2048``), names bound once to such a value in the function or at module level,
  ``x.attr = value`` set on a call's result afterwards, the file's own functions called with
  their result inlined (torchtitan's ``config = llama3_8b(); config.compile = ...``), and
  argparse ``--flag`` values from the launch line that runs the script (or their ``default=``
  when the launch line does not pass them);
- names from imports as :class:`Ref` (``Format.HYBRID`` ->
  ``transformer_engine.common.recipe.Format.HYBRID``);
- everything else (a function parameter, a value set conditionally or twice, a call result,
  ``os.environ``, f-strings) as :class:`Unresolved` with the reason, never a guess.

Each framework module reads the calls it knows (``Framework.read_python``). Bounds: files over
:data:`MAX_BYTES` are not parsed (a training script is tens of KB; parsing costs ~3 s per MB),
nesting beyond what :func:`ast.parse` accepts is a problem with the line (it raises
``RecursionError`` / ``MemoryError`` / ``SyntaxError`` instead of crashing on 3.11), and every
walk here is bounded by :data:`MAX_DEPTH`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from preflight.reading.parse import ParseError
from preflight.reading.pyscopes import Layout, Scope
from preflight.reading.pyvalues import (
    BUILTINS,
    MAX_DEPTH,
    Arg,
    Call,
    Ref,
    Unresolved,
    dotted,
    number,
    typed,
)

__all__ = ["MAX_BYTES", "Call", "Module", "Ref", "Unresolved", "parse"]

MAX_BYTES = 256 * 1024
"""Python files above this size are not parsed (``ast.parse`` takes ~3 s per MB here)."""
MAX_INLINE = 6
"""Calls to the file's own functions followed, one inside another."""
MAX_SEQUENCE = 2048
"""Items of a list, tuple or dict evaluated."""


def parse(path: str, text: str) -> ast.Module:
    """The syntax tree of ``text``, or :class:`ParseError` naming the line."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise ParseError(f"a Python file over {MAX_BYTES // 1024} KB is not parsed (a training "
                         "script is a few tens of KB)")
    try:
        return ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise ParseError(f"not valid Python: {exc.msg}; Python would refuse to run it too",
                         exc.lineno) from None
    except (RecursionError, MemoryError):
        raise ParseError("nested too deeply for Python's parser; Python would refuse to run it "
                         "too") from None
    except ValueError as exc:       # source with NUL bytes
        raise ParseError(f"not Python source ({exc})") from None


class Module(Layout):
    """A parsed Python file: its calls with their arguments resolved as far as the text says."""

    def __init__(self, path: str, tree: ast.Module, argv: tuple[str, ...] | None = None,
                 entry: str | None = None) -> None:
        super().__init__(tree)
        self.path, self.argv = path, argv
        self.entry = entry
        """The function the user named (``FILE.py::NAME``): which config of a registry is the job."""
        self.options: dict[str, Arg] = {}
        self._inlining = 0
        self._calls: list[tuple[Call, Scope]] | None = None
        for scope in self.scopes:       # argparse options first: `args.x` reads them anywhere
            for node in scope.calls:
                if isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                    self._call(node, scope, 0)

    # -- what a call's arguments are -------------------------------------------------------

    def calls(self) -> list[tuple[Call, Scope]]:
        """Every call of the file with its arguments resolved, in the scope it is made in
        (attributes set afterwards on the name the call is bound to included)."""
        if self._calls is None:
            self._calls = list(self._resolve_calls())
        return self._calls

    def _resolve_calls(self) -> Iterator[tuple[Call, Scope]]:
        for scope in self.scopes:
            bound = {id(value): name for name, binds in scope.binds.items()
                     for value, _, _ in binds if len(binds) == 1}
            for node in scope.calls:
                call = self._call(node, scope, 0)
                if isinstance(call, Call) and id(node) in bound:
                    call = self._apply_sets(call, scope, bound[id(node)], 0)
                if isinstance(call, Call):
                    yield call, scope

    def lineage(self, func: str) -> tuple[str, ...]:
        """``func`` and, for a class of this file, its bases (qualified, transitively): a
        ``class Args(TrainingArguments)`` call is a TrainingArguments call."""
        out = [func]
        todo = [func]
        while todo and len(out) < MAX_INLINE * 4:
            name = todo.pop()
            if not name.startswith("__main__."):
                continue
            cls = self.classes.get(name[9:])
            for base in cls.bases if cls is not None else ():
                value = self.evaluate(base, self.module, 1)
                if isinstance(value, Ref) and value.name not in out:
                    out.append(value.name)
                    todo.append(value.name)
        return tuple(out)

    def option(self, dest: str) -> Any:
        """An argparse option's value: from the launch line's arguments when known, else its
        default (a launch line was read and does not pass it), else Unresolved."""
        opt = self.options.get(dest)
        if opt is None:
            return Unresolved(f"args.{dest} is not an option this file declares")
        where = f"{self.path}:{opt.line}"
        if self.argv is None:
            return Unresolved(f"args.{dest} comes from the command line ({'/'.join(opt.flags)}, "
                              f"default {opt.default!r} at {where}); no launch line that runs "
                              "this script was read", opt.line)
        for i, word in enumerate(self.argv):
            flag, eq, inline = word.partition("=")
            if flag in opt.flags:
                if opt.store is not None:
                    return opt.store
                raw = inline if eq else (self.argv[i + 1] if i + 1 < len(self.argv) else None)
                return typed(raw) if raw is not None else Unresolved(
                    f"{flag} is given without a value")
        return opt.default

    def evaluate(self, node: ast.expr, scope: Scope, depth: int = 0) -> Any:
        """The value of ``node`` in ``scope`` as far as the text gives it."""
        if depth > MAX_DEPTH:
            return Unresolved("nested too deeply to follow", getattr(node, "lineno", None))
        line = getattr(node, "lineno", None)
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, (str, int, float, bool, type(None))) \
                else Unresolved(f"a {type(node.value).__name__} constant", line)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            if len(node.elts) > MAX_SEQUENCE:
                return Unresolved(f"a sequence of more than {MAX_SEQUENCE} items", line)
            return [self.evaluate(e, scope, depth + 1) for e in node.elts]
        if isinstance(node, ast.Dict):
            return self._dict(node, scope, depth)
        if isinstance(node, ast.Name):
            return self._name(node.id, scope, depth, line)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, scope, depth)
        if isinstance(node, ast.Call):
            return self._call(node, scope, depth)
        if isinstance(node, ast.UnaryOp):
            value = self.evaluate(node.operand, scope, depth + 1)
            if isinstance(node.op, ast.USub) and number(value):
                return -value
            if isinstance(node.op, ast.Not) and isinstance(value, bool):
                return not value
            return Unresolved("an expression computed when the script runs", line)
        if isinstance(node, ast.BinOp):
            return self._arith(node, scope, depth)
        if isinstance(node, ast.IfExp):
            return Unresolved("chosen by a condition when the script runs", line)
        return Unresolved("computed when the script runs", line)

    def _dict(self, node: ast.Dict, scope: Scope, depth: int) -> Any:
        if len(node.keys) > MAX_SEQUENCE:
            return Unresolved(f"a dict of more than {MAX_SEQUENCE} items", node.lineno)
        out: dict[str, Any] = {}
        for key, value in zip(node.keys, node.values):
            if key is None:               # {**other}
                merged = self.evaluate(value, scope, depth + 1)
                if not isinstance(merged, dict):
                    return Unresolved("a dict merged from one the text does not give",
                                      node.lineno)
                out.update(merged)
                continue
            k = self.evaluate(key, scope, depth + 1)
            if not isinstance(k, str):
                return Unresolved("a dict with keys computed when the script runs", node.lineno)
            out[k] = self.evaluate(value, scope, depth + 1)
        return out

    def _name(self, name: str, scope: Scope, depth: int, line: int | None) -> Any:
        for where in (scope, self.module) if scope is not self.module else (scope,):
            binds = where.binds.get(name)
            if binds:
                if len(binds) > 1 or binds[0][2]:
                    lines = ", ".join(str(b[1]) for b in binds)
                    how = "set more than once" if len(binds) > 1 else "set conditionally"
                    return Unresolved(f"{name} is {how} (line {lines})", line)
                value = self.evaluate(binds[0][0], where, depth + 1)
                return self._apply_sets(value, where, name, depth) if isinstance(value, Call) \
                    else value
            if where is scope and name in scope.values:
                return scope.values[name]
            if where is scope and name in scope.params:
                return Unresolved(f"{name} is a parameter of {scope.name}()", line)
        if name in self.imports:
            return Ref(self.imports[name])
        if name in BUILTINS:
            return Ref(f"builtins.{name}")
        if name in self.functions or name in self.classes:
            return Ref(f"{self._module_name()}.{name}")
        return Unresolved(f"{name} is not defined in this file", line)

    def _module_name(self) -> str:
        return "__main__"

    def _attribute(self, node: ast.Attribute, scope: Scope, depth: int) -> Any:
        base = self.evaluate(node.value, scope, depth + 1)
        if isinstance(base, Ref):
            return Ref(f"{base.name}.{node.attr}")
        if isinstance(base, Call):
            if base.name in ("parse_args", "parse_known_args"):
                return self.option(node.attr)
            if node.attr in base.kwargs:
                return base.kwargs[node.attr]
            return Unresolved(f"{node.attr} of {base.name or 'an object'}() is not given in "
                              "this file", node.lineno)
        return base if isinstance(base, Unresolved) else \
            Unresolved(f".{node.attr} of a value computed when the script runs", node.lineno)

    def _arith(self, node: ast.BinOp, scope: Scope, depth: int) -> Any:
        left = self.evaluate(node.left, scope, depth + 1)
        right = self.evaluate(node.right, scope, depth + 1)
        try:
            if number(left) and number(right):
                if isinstance(node.op, ast.Add):
                    value = left + right
                elif isinstance(node.op, ast.Sub):
                    value = left - right
                elif isinstance(node.op, ast.Mult):
                    value = left * right
                elif isinstance(node.op, ast.FloorDiv):
                    value = left // right
                elif isinstance(node.op, ast.Div):
                    value = left / right
                else:
                    raise ArithmeticError
                if abs(value) < 2 ** 63:
                    return value
            if isinstance(left, str) and isinstance(right, str) and \
                    isinstance(node.op, ast.Add) and len(left) + len(right) <= 4096:
                return left + right
        except (ArithmeticError, OverflowError):
            pass
        return Unresolved("computed when the script runs", node.lineno)

    def _call(self, node: ast.Call, scope: Scope, depth: int) -> Any:
        func = self.evaluate(node.func, scope, depth + 1)
        if isinstance(node.func, ast.Name) and node.func.id in self.functions and \
                not isinstance(func, Unresolved):
            inlined = self._inline(node, scope, depth)
            if inlined is not None:
                return inlined
        name = func.name if isinstance(func, Ref) else dotted(node.func) or "?"
        if isinstance(func, Call):          # a method of a call's result: parser.parse_args()
            name = f"{func.func}().{dotted(node.func) or '?'}"
            if isinstance(node.func, ast.Attribute):
                name = f"{func.func}.{node.func.attr}"
        call = Call(name, node.lineno,
                    tuple(self.evaluate(a, scope, depth + 1) for a in node.args[:64]))
        kwargs: dict[str, Any] = {}
        lines: dict[str, int] = {}
        star: Unresolved | None = None
        for kw in node.keywords[:MAX_SEQUENCE]:
            value = self.evaluate(kw.value, scope, depth + 1)
            if kw.arg is None:
                if isinstance(value, dict):
                    kwargs.update(value)
                    lines.update({k: kw.value.lineno for k in value})
                else:
                    star = Unresolved("keywords passed as **mapping that the text does not give",
                                      kw.value.lineno)
                continue
            kwargs[kw.arg] = value
            lines[kw.arg] = kw.value.lineno
        call = replace(call, kwargs=kwargs, lines=lines, star=star)
        if call.name == "dict" and not call.args:
            return kwargs if star is None else star
        if call.name == "add_argument":
            self._option(call)
        return call

    def _inline(self, node: ast.Call, scope: Scope, depth: int) -> Any:
        """The result of calling one of the file's own functions (its single return), its
        parameters bound to the call's arguments or their defaults."""
        assert isinstance(node.func, ast.Name)
        fn, inner = self.functions[node.func.id]
        if len(inner.returns) != 1 or self._inlining >= MAX_INLINE:
            return None
        self._inlining += 1
        try:
            values: dict[str, Any] = {p: self.evaluate(d, self.module, depth + 1)
                                      for p, d in inner.defaults.items()}
            values.update((p, self.evaluate(a, scope, depth + 1))
                          for p, a in zip(inner.params, node.args))
            values.update((kw.arg, self.evaluate(kw.value, scope, depth + 1))
                          for kw in node.keywords if kw.arg in inner.params)
            bound = replace(inner, values=values)
            result = self.evaluate(inner.returns[0], bound, depth + 1)
            return None if isinstance(result, Ref) else result
        finally:
            self._inlining -= 1

    def _apply_sets(self, call: Call, scope: Scope, name: str | None, depth: int) -> Call:
        """``name.a.b = value`` statements of ``scope`` applied to ``call``."""
        if name is None:
            return call
        for path, value, line, conditional in scope.sets.get(name, ()):
            if not path:
                continue
            got = Unresolved(f"{name}.{'.'.join(path)} is set conditionally (line {line})",
                             line) if conditional else self.evaluate(value, scope, depth + 1)
            call = call.with_set(path, got, line)
        return call

    def _option(self, call: Call) -> None:
        flags = tuple(a for a in call.args if isinstance(a, str) and a.startswith("-"))
        longs = [f for f in flags if f.startswith("--")]
        if not longs:
            return
        dest = call.kwargs.get("dest")
        if not isinstance(dest, str):
            dest = longs[0][2:].replace("-", "_")
        action = call.kwargs.get("action")
        store: Any = {"store_true": True, "store_false": False}.get(action) \
            if isinstance(action, str) else None
        default = call.kwargs.get("default", (not store) if isinstance(store, bool) else None)
        self.options.setdefault(dest, Arg(dest, flags, default, store, call.line))


