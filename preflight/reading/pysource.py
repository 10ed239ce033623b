"""Python job files read by their syntax tree: parsed with :func:`ast.parse`, never imported or
executed (issue 22 item 1).

A training script sets FP8 in code (``Accelerator(mixed_precision="fp8")``, ``te.autocast(
recipe=DelayedScaling())``). This module turns a file into :class:`Call` records, one per call
the file makes, each argument's value as far as it can be known without running anything:

- literals, lists, tuples, dicts (``**`` of a literal dict merged), ``dict(a=1)``, small integer
  arithmetic (``8 * 2048``), comparisons and ``and`` / ``or`` / ``not`` of such values, names
  bound to such a value in the function, the functions it is defined in, or at module level
  (the binding a use sees: the last one before it that runs), ``x.attr = value`` set on a
  call's result afterwards, the file's own functions inlined (``config = llama3_8b()``), a
  parameter as every call of its function passes it, ``self.x`` as ``__init__`` sets it
  (:mod:`.pycallers`), and argparse ``--flag`` values and click options (:mod:`.pyclick`) from
  the launch line that runs the script (or their defaults when it does not pass them);
- conditions (:mod:`.pyguards`): an ``if`` / ``elif`` / ``else`` whose test those values decide
  is followed (``if args.precision == "fp8": kwargs = [AORecipeKwargs()]`` with the launch
  line's ``--precision``); a binding, attribute set, return or call under one they do not
  decide is Unresolved (a call: :attr:`Call.when`) with the test and why it is not known, and a
  call in a branch that does not run is not made;
- names from imports as :class:`Ref` (``Format.HYBRID``); a ``@hydra.main`` function's config
  as Hydra composes it (:mod:`.pyhydra`); f-strings, str methods, int(), ``os.environ`` as the
  launch line sets it (:mod:`.pyenviron`); an object another job file changed (:mod:`.pyshared`);
- everything else (a function parameter, a value set in a loop or an ``except`` handler, a call
  result) as :class:`Unresolved` with the reason, never a guess.

Each framework module reads the calls it knows (``Framework.read_python``). Bounds: files over
:data:`MAX_BYTES` are not parsed, too deep nesting is a problem with the line; walks, values and
a file's work are bounded (:data:`MAX_DEPTH`, ``pyvalues.MAX_WEIGHT`` and ``MAX_STEPS``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from preflight.reading import (
    pyargedits,
    pybuiltins,
    pycallables,
    pycallers,
    pyenviron,
    pyforeign,
    pylookup,
    pyloopstep,
    pyprops,
)
from preflight.reading.parse import ParseError
from preflight.reading.pybuiltins import NOTHING, binop
from preflight.reading.pycallers import apply_sets, call_sites, inline, never_called
from preflight.reading.pyguards import Guards, boolop, compare, decide, truth
from preflight.reading.pyoption import Arg, option_of, option_value, shared_dest
from preflight.reading.pyscopes import Bind, Layout, Scope
from preflight.reading.pyvalues import (
    MAX_DEPTH,
    Call,
    Ref,
    Unresolved,
    Weights,
    dict_of,
    dotted,
    fstring,
    keyword_once,
    number,
)

__all__ = ["MAX_BYTES", "Call", "Module", "Ref", "Unresolved", "parse"]

MAX_BYTES = 256 * 1024
"""Python files above this size are not parsed (``ast.parse`` takes ~3 s per MB here)."""
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
                 entry: str | None = None, bindings: Mapping[str, Sequence[Call]] | None = None,
                 environ: pyenviron.Environ | None = None, by_hand: bool = False) -> None:
        super().__init__(tree)
        self.path, self.argv, self.entry, self.environ = path, argv, entry, environ
        """The function the user named (``FILE.py::NAME``): which config of a registry is the job;
        ``environ``: what the launch lines that run it give its environment (:mod:`.pyenviron`)."""
        self.by_hand = by_hand and argv is None
        """A script the user named that no launch line read runs: its argparse options are read
        as ``python FILE.py`` gives them, their defaults (:meth:`option`), each noted in
        :attr:`defaulted` for the note saying so (jobs/pyjob.py)."""
        self.defaulted: dict[str, int] = {}
        self.bindings = dict(bindings or {})
        """Other job files' calls of this file's functions/classes (:mod:`.jobs.pyimports`)."""
        self.shared: dict[str, Any] = {}    # top-level names as an importer leaves them: pyshared
        self._sites, self._escapes = call_sites(tree)
        self.call_scope = {id(n): sc for sc in self.scopes for n in sc.calls}
        self._params: dict[tuple[int, str, int], Any] = {}
        self.options: dict[str, Arg] = {}
        self._clicks: dict[int, dict[str, Arg]] = {}
        self._inlining, self._weights = 0, Weights()
        self._memo: dict[tuple[int, str, int | None, int], tuple[Scope, Any]] = {}
        self._tested: dict[tuple[int, int, int], tuple[Scope, Any]] = {}
        self._decided: dict[tuple[int, int, bool, int],
                            tuple[Guards, Scope, bool | Unresolved]] = {}
        self._calls: list[tuple[Call, Scope]] | None = None
        self.looped_names: dict[tuple[int, str], Any] = {}
        for scope in self.scopes:       # argparse options first: `args.x` reads them anywhere
            for node in scope.calls:
                if isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                    self._call(node, scope, 0)
        self._memo.clear()      # names read before every option was known
        self.__dict__.pop("_applied", None)     # (pycallers.apply_sets' memo, likewise)
        self._tested.clear()
        self._decided.clear()

    # -- what a call's arguments are -------------------------------------------------------

    def calls(self) -> list[tuple[Call, Scope]]:
        """Every call of the file with its arguments resolved, in the scope it is made in
        (attributes set afterwards on the name the call is bound to included)."""
        if self._calls is None:
            self._calls = list(self._resolve_calls())
        return self._calls

    def _resolve_calls(self) -> Iterator[tuple[Call, Scope]]:
        made: list[tuple[Call, Scope]] = []
        for scope in self.scopes:
            if (self.bindings and not pycallers.reached(self, scope)) or never_called(self, scope):
                continue                # a helper's never called; a function whose calls never run
            per_site = pyforeign.sites(self, scope)     # a method read once per `self.m(...)`
            made.extend(pyforeign.calls(self, scope, self._made) if per_site else
                        self._made(scope))
        # A call in a function, under a condition on its parameters, that a call of the function
        # elsewhere in the file decides (the result of `make_parser()` inlined): that one counts.
        decided = {(c.func, c.line) for c, _ in made if c.when is None}
        yield from ((c, s) for c, s in made if c.when is None or (c.func, c.line) not in decided)

    def _made(self, scope: Scope) -> Iterator[tuple[Call, Scope]]:
        bound = {id(b.value): name for name, binds in scope.binds.items()
                 for b in binds if len(binds) == 1}
        for node in scope.calls:
            guards = scope.call_guards.get(id(node))
            runs = self.runs(guards, scope, calls=True) if guards else True
            if runs is False:
                continue        # in a branch the text shows does not run
            call = self._call(node, scope, 0)
            if isinstance(call, Call) and id(node) in bound:
                call = apply_sets(self, call, scope, bound[id(node)], 0)
            if isinstance(call, Call):
                yield (call if runs is True else replace(call, when=runs), scope)

    def runs(self, guards: Guards, scope: Scope, calls: bool = False,
             depth: int = 0) -> bool | Unresolved:
        """Whether code under ``guards`` in ``scope`` runs: True, False, or Unresolved with the
        condition the text does not decide (:func:`.pyguards.decide`; per-step tests of a loop:
        :mod:`.pyloopstep`). Worked out once per block and each test once per scope (5,000 calls
        under one long test must not evaluate it 5,000 times)."""
        def test(node: ast.expr) -> Any:
            at = (id(node), id(scope), depth)
            if at not in self._tested:
                self._tested[at] = (scope, self.evaluate(node, scope, depth + 1))
            return self._tested[at][1]
        key = (id(guards), id(scope), calls, depth)
        if key not in self._decided:
            got = pyloopstep.after(self, decide(guards, test, calls), guards, scope, depth, calls)
            self._decided[key] = (guards, scope, got)
        return self._decided[key][2]

    def result(self, scope: Scope, depth: int = 0) -> Any:
        """What a function returns: its return that runs, as far as the text decides which."""
        for node, guards in scope.returns:
            state = self.runs(guards, scope, depth=depth) if guards else True
            if state is True:
                return self.evaluate(node, scope, depth + 1)
            if isinstance(state, Unresolved):
                lines = ", ".join(str(n.lineno) for n, _ in scope.returns[:6])
                return Unresolved(f"{scope.name}() returns at line {lines}, which one depends "
                                  f"on a condition ({state.reason})", node.lineno)
        return Unresolved(f"{scope.name}() has no return the text shows runs")

    def lineage(self, func: str) -> tuple[str, ...]:
        """``func`` and, for a class of this file, its bases (qualified, transitively): a
        ``class Args(TrainingArguments)`` call is a TrainingArguments call."""
        out, todo = [func], [func]
        while todo and len(out) < pycallers.MAX_INLINE * 4:
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

    def option(self, dest: str, parsed: Call | None = None) -> Any:
        """An argparse option's value (:func:`.pyoption.option_value`) as ``parsed`` (the
        ``parse_args`` call) reads it, unless the file changes it (:mod:`.pyargedits`)."""
        longs = (f for a in self.options.values() for f in (*a.flags, *a.off)
                 if f.startswith("--"))
        opt = self.options.get(dest)
        if opt is not None and (why := pyargedits.changed(self, dest, parsed)) is not None:
            return why
        if (given := pyargedits.given_argv(parsed)) is not None:
            return option_value(opt, dest, given, self.path, longs)
        if self.by_hand and opt is not None:
            self.defaulted.setdefault("/".join(opt.flags), opt.line)
            return option_value(opt, dest, (), self.path, longs)
        return option_value(opt, dest, self.argv, self.path, longs)

    def evaluate(self, node: ast.expr, scope: Scope, depth: int = 0) -> Any:
        """The value of ``node`` in ``scope`` as far as the text gives it (bounded in parts and
        in steps: :data:`.pyvalues.MAX_STEPS`)."""
        over = self._weights.spend(getattr(node, "lineno", None))
        return over if over is not None else \
            self._weights.bounded(self._evaluate(node, scope, depth), node.lineno)

    def _evaluate(self, node: ast.expr, scope: Scope, depth: int) -> Any:
        if depth > MAX_DEPTH:
            return Unresolved("nested too deeply to follow", getattr(node, "lineno", None))
        line = getattr(node, "lineno", None)
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, (str, int, float, bool, type(None))) \
                else Unresolved(f"a {type(node.value).__name__} constant", line)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            if len(node.elts) > MAX_SEQUENCE:
                return Unresolved(f"a sequence of more than {MAX_SEQUENCE} items", line)
            items = [self.evaluate(e, scope, depth + 1) for e in node.elts]
            return pybuiltins.set_of(items) if isinstance(node, ast.Set) else items
        if isinstance(node, ast.Dict):
            return dict_of(node, lambda v: self.evaluate(v, scope, depth + 1), MAX_SEQUENCE)
        if isinstance(node, ast.Subscript):     # os.environ["X"], a dict's item
            return pyenviron.subscript(self, node, scope, depth)
        if isinstance(node, ast.JoinedStr):
            return fstring(node, lambda v: self.evaluate(v, scope, depth + 1))
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
            if isinstance(node.op, ast.Not) and truth(value) is not None:
                return not truth(value)
            return value if isinstance(value, Unresolved) else \
                Unresolved("an expression computed when the script runs", line)
        if isinstance(node, ast.BinOp):
            return self._arith(node, scope, depth)
        if isinstance(node, ast.Compare) and len(node.ops) <= 8:
            return compare(node.ops, [self.evaluate(v, scope, depth + 1)
                                      for v in (node.left, *node.comparators)], line)
        if isinstance(node, ast.BoolOp):
            return boolop(node, lambda v: self.evaluate(v, scope, depth + 1))
        if isinstance(node, ast.IfExp):     # (with the test's own reason: pyfromyaml's file)
            got = self.evaluate(node.test, scope, depth + 1)
            if truth(got) is not None:
                return self.evaluate(node.body if truth(got) else node.orelse, scope, depth + 1)
            why = getattr(got, "reason", "its value is known only then")
            return Unresolved(f"chosen by a condition when the script runs: {why}", line)
        got = pybuiltins.comprehension(self, node, scope, depth)
        return got if got is not NOTHING else pycallables.other(node, scope, line)  # a lambda

    def _name(self, name: str, scope: Scope, depth: int, line: int | None) -> Any:
        return pylookup.name_value(self, name, scope, depth, line)

    def _bound(self, name: str, binds: list[Bind], scope: Scope, line: int | None,
               depth: int) -> Any:
        return pylookup.bound(self, name, binds, scope, line, depth)

    def _reaching(self, name: str, binds: list[Bind], scope: Scope,
                  line: int | None, depth: int) -> Bind | Unresolved | None:
        return pylookup.reaching(self, name, binds, scope, line, depth)

    def _attribute(self, node: ast.Attribute, scope: Scope, depth: int) -> Any:
        return pyprops.attribute(self, node, scope, depth)

    def _arith(self, node: ast.BinOp, scope: Scope, depth: int) -> Any:
        return binop(node.op, self.evaluate(node.left, scope, depth + 1),
                     self.evaluate(node.right, scope, depth + 1), node.lineno)

    def _call(self, node: ast.Call, scope: Scope, depth: int) -> Any:
        func = self.evaluate(node.func, scope, depth + 1)
        if isinstance(node.func, ast.Name) and node.func.id in self.functions and \
                not isinstance(func, Unresolved):
            inlined = inline(self, node, scope, depth)
            if inlined is not None:
                return inlined
        called = pycallables.call(self, node, scope, depth, func)   # a lambda, a parameter...
        if called is not pycallables.NOTHING:
            return called
        got = pybuiltins.special(self, node, scope, depth, func)   # builtins, helpers, os.environ
        if got is not NOTHING:
            return got
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
                    kwargs.update({k: keyword_once(kwargs, k, v, node.lineno) for k, v in value.items()})
                    lines.update({k: kw.value.lineno for k in value})
                else:
                    star = Unresolved("keywords passed as **mapping that the text does not give",
                                      kw.value.lineno)
                continue
            kwargs[kw.arg] = keyword_once(kwargs, kw.arg, value, node.lineno)
            lines[kw.arg] = kw.value.lineno
        call = replace(call, kwargs=kwargs, lines=lines, star=star)
        if call.name == "dict" and not call.args:
            return kwargs if star is None else star
        if call.name == "add_argument":
            self._option(call)
        return call

    def _option(self, call: Call) -> None:
        arg = option_of(call)
        if self.by_hand and pyargedits.subcommand(self, call):
            return      # `python FILE.py` gives no sub-command: its options are not set
        if arg is not None:
            self.options[arg.dest] = shared_dest(self.options.get(arg.dest), arg)
