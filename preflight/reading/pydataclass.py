"""The dataclass a typer command builds from the launch line with miles' / slime's
``dataclass_cli`` (issue 22: ``python scripts/run_deepseek_v4.py train --fp8-training ...``).

miles (radixark/miles e719999e, miles/utils/typer_utils.py) and slime (THUDM/slime v0.3.1,
slime/utils/external_utils/typer_utils.py) turn a function whose first parameter is a dataclass
into a typer command whose options are the dataclass's ``__init__`` parameters::

    @app.command()
    @U.dataclass_cli
    def train(args: ScriptArgs): ...

Each field ``model_name`` is the option ``--model-name`` (``--x/--no-x`` for a ``bool``), typed by
its annotation, bound to the environment variable ``MILES_SCRIPT_MODEL_NAME`` (slime:
``SLIME_SCRIPT_``; ``dataclass_cli(env_var_prefix="")``: none), else its default; a field
``field(init=False)`` is no option (typer refuses it on the command line). ``wrapped`` then
calls ``ScriptArgs(**kwargs)``, whose ``__post_init__`` runs: its plain assignments to
``self.x`` (and ``if`` tests the values decide) are followed, anything else leaves what it sets
Unresolved. With several commands (``app.command()`` on several functions) the launch line's
first word names the one that runs, its name with ``_`` as ``-`` (typer/main.py
``get_command_name``).

:func:`command` gives ``(function name, the dataclass as a Call)``, for
:attr:`.pysource.Module.bindings`: the command's parameter is that value in every function it
is passed to, and the functions the command does not reach do not run (:mod:`.pycallers`).
A field the job sets again elsewhere (``args.fp8_training = ...``) under a condition the text
does not show false is Unresolved there. Nothing is imported or run.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from preflight.base.digits import ascii_int
from preflight.reading import pyclick, pyenviron
from preflight.reading.pycallers import reached
from preflight.reading.pyguards import truth
from preflight.reading.pyoption import option_value
from preflight.reading.pyvalues import Call, Ref, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pysource import Module

MAX_FIELDS = 256
Bases = dict[str, tuple[tuple[str, str, Any], ...]]
"""Dataclasses of an installed package a script's dataclass derives from: their fields
``(name, type, default)``; a default ``(VARIABLE, text)`` is read from the environment when the
package is imported."""
SETTERS: dict[str, tuple[str, ...]] = {
    # miles/true_on_policy/config.py l.271-279 at 31f1ca96: sets args.use_sequence_parallel only
    "apply_true_on_policy_script_defaults": ("use_sequence_parallel",),
}
"""Functions of an installed package ``__post_init__`` hands ``self`` to, and the fields each
sets (read at a commit); any other such call may set any field: all Unresolved."""


def command(module: Module, prefixes: dict[str, str], bases: Bases,
            ) -> tuple[str, Call] | Unresolved | None:
    """The typer command the launch line runs, when it is a ``dataclass_cli`` one, with the
    dataclass its parameter is; Unresolved saying why it is not known; None when the file has
    no such command. ``prefixes``: ``dataclass_cli``'s default ``env_var_prefix`` by the
    package it comes from; ``bases``: :data:`Bases`."""
    commands: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, str]] = []
    for name, (node, scope) in list(module.functions.items())[:MAX_FIELDS]:
        prefix = _dataclass_cli(module, node, prefixes)
        if prefix is not None and pyclick.options(module, scope) == {} and \
                pyclick._typer_command(module, node):
            commands.append((name, node, prefix))
    if not commands:
        return None
    argv = module.argv
    if argv is None:
        return Unresolved(f"the typer command and its options come from the command line "
                          f"({', '.join(c[0] for c in commands[:6])}); no launch line that runs "
                          "this script was read")
    rest: tuple[str, ...] = argv
    if len(commands) > 1:
        names = {_name(module, node, name): (name, node, prefix)
                 for name, node, prefix in commands}
        if not argv or argv[0] not in names:
            return Unresolved(f"the launch line runs the command {argv[0] if argv else '(none)'!r}"
                              f", not one of {sorted(names)[:8]}")
        commands, rest = [names[argv[0]]], argv[1:]
    name, node, prefix = commands[0]
    args = node.args.args
    cls = module.classes.get(args[0].annotation.id) if args and isinstance(
        args[0].annotation, ast.Name) else None
    if cls is None:
        return Unresolved(f"{name}()'s dataclass is not defined in this file")
    return name, _instance(module, cls, rest, prefix, bases)


def _name(module: Module, node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> str:
    for dec in node.decorator_list:
        if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and \
                dec.func.attr == "command" and dec.args:
            given = module.evaluate(dec.args[0], module.module, 1)
            if isinstance(given, str):
                return given
    return name.replace("_", "-")


def _dataclass_cli(module: Module, node: ast.FunctionDef | ast.AsyncFunctionDef,
                   prefixes: dict[str, str]) -> str | None:
    """The ``env_var_prefix`` of a ``dataclass_cli`` decorator on ``node``, else None."""
    for dec in node.decorator_list:
        func = dec.func if isinstance(dec, ast.Call) else dec
        ref = module.evaluate(func, module.module, 1)
        if isinstance(ref, Ref) and ref.last == "dataclass_cli":
            package = ref.name.split(".")[0]
            prefix = prefixes.get(package, "")
            if isinstance(dec, ast.Call):
                given = next((k.value for k in dec.keywords if k.arg == "env_var_prefix"), None)
                if given is not None:
                    value = module.evaluate(given, module.module, 1)
                    prefix = value if isinstance(value, str) else "\x00"
            return prefix
    return None


def _fields(module: Module, cls: ast.ClassDef, bases: Bases, depth: int = 0
            ) -> list[tuple[str, ast.expr | None, ast.expr | None, int]]:
    """``(name, annotation, default, line)`` of each ``__init__`` field, bases first."""
    out: list[tuple[str, ast.expr | None, ast.expr | None, int]] = []
    for base in cls.bases[:4]:
        ref = module.evaluate(base, module.module, 1)
        own = module.classes.get(base.id) if isinstance(base, ast.Name) else None
        if own is not None and depth < 4:
            out.extend(_fields(module, own, bases, depth + 1))
        elif isinstance(ref, Ref) and ref.last in bases:
            out.extend((n, ast.Name(kind), None, cls.lineno) for n, kind, _ in bases[ref.last])
    for stmt in cls.body[:MAX_FIELDS]:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            default = stmt.value
            if isinstance(default, ast.Call) and isinstance(default.func, ast.Name) and \
                    default.func.id == "field":
                if any(k.arg == "init" and isinstance(k.value, ast.Constant) and
                       k.value.value is False for k in default.keywords):
                    out = [f for f in out if f[0] != stmt.target.id]
                    continue
                default = next((k.value for k in default.keywords if k.arg == "default"),
                               default)
            out = [f for f in out if f[0] != stmt.target.id]
            out.append((stmt.target.id, stmt.annotation, default, stmt.lineno))
    return out


def _instance(module: Module, cls: ast.ClassDef, argv: tuple[str, ...], prefix: str,
              bases: Bases) -> Call:
    fields = _fields(module, cls, bases)
    longs = [f"--{n.replace('_', '-')}" for n, *_ in fields]
    kwargs: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for name, note, default_node, line in fields:
        kind, _ = pyclick._annotation(module, note)
        base = next((d for f, k, d in bases.get(_base_of(module, cls, bases), ())
                     if f == name), None)
        default: Any = module.evaluate(default_node, module.module, 1) \
            if default_node is not None else _base_default(module, base, line)
        flag = f"--{name.replace('_', '-')}"
        decl = f"{flag}/--no-{name.replace('_', '-')}" if kind == "bool" else flag
        opt = pyclick.option(Call("click.option", line, (name, decl), {
            "default": default if not isinstance(default, (Call, Ref)) else None,
            **({"is_flag": True} if kind == "bool" else {}),
            **({"type": Ref(f"builtins.{kind}")} if kind in ("int", "float", "str") else {})}))
        given = any(w.split("=", 1)[0] in (flag, f"--no-{name.replace('_', '-')}")
                    for w in argv)
        if opt is not None and given:
            value = option_value(opt, name, argv, module.path, longs, label=flag)
        else:
            value = _from_env(module, f"{prefix}{name.upper()}", kind, line) \
                if prefix and prefix != "\x00" else None
            if value is None:
                value = default
        kwargs[name], lines[name] = value, line
    unknown = [w for w in argv if w.startswith("--") and w.split("=", 1)[0] not in longs
               and not any(w.split("=", 1)[0] == f"--no-{x[2:]}" for x in longs)]
    call = Call(f"__main__.{cls.name}", cls.lineno, (), kwargs, lines,
                star=Unresolved(f"typer refuses {unknown[0][:60]} (no such option of "
                                f"{cls.name})") if unknown else None)
    return _post_init(module, cls, call)


def _base_of(module: Module, cls: ast.ClassDef, bases: Bases) -> str:
    for base in cls.bases[:4]:
        ref = module.evaluate(base, module.module, 1)
        if isinstance(ref, Ref) and ref.last in bases:
            return ref.last
    return ""


def _base_default(module: Module, base: Any, line: int) -> Any:
    if isinstance(base, tuple):          # read from the environment when miles is imported
        got = pyenviron.lookup(module, base[0], module.module, line, default=base[1])
        number = ascii_int(got) if isinstance(got, str) else None
        return got if number is None else number
    return base


def _from_env(module: Module, name: str, kind: str | None, line: int) -> Any:
    """typer's ``envvar=``: the variable's value when the launch line gives it, converted as
    click converts it; None when it is not set there."""
    got = pyenviron.lookup(module, name, module.module, line, default=None)
    if got is None or isinstance(got, Unresolved) and "not set" in got.reason:
        return None
    if isinstance(got, Unresolved) or not isinstance(got, str):
        return got
    if kind == "bool":
        low = got.strip().lower()
        return low in ("1", "true", "t", "yes", "y", "on") if low in (
            "1", "true", "t", "yes", "y", "on", "0", "false", "f", "no", "n", "off") else \
            Unresolved(f"{name}={got[:40]!r} is no boolean: typer refuses it", line)
    if kind in ("int", "float"):
        try:
            return int(got) if kind == "int" else float(got)
        except ValueError:
            return Unresolved(f"{name}={got[:40]!r} is no {kind}: typer refuses it", line)
    return str(got)


def _post_init(module: Module, cls: ast.ClassDef, call: Call) -> Call:
    """``call`` after the class's ``__post_init__``: plain ``self.x = ...`` followed, ``if``
    tests the values decide taken, what anything else sets Unresolved."""
    scope = module.methods.get((cls.name, "__post_init__"))
    if scope is None or not scope.params:
        return call
    values = dict(call.kwargs)
    self_ = scope.params[0]

    def run(body: list[ast.stmt], when: str | None) -> bool | str:
        """Follow ``body``; True once it returns, a reason when it may have returned."""
        for stmt in body[:MAX_FIELDS]:
            me = replace(scope, values={self_: replace(call, kwargs=dict(values))})
            if isinstance(stmt, (ast.Return, ast.Raise)):
                return True         # redteam7: what follows a return never runs
            if _escapes(stmt, self_):
                # redteam7: `self.__dict__.update(...)`, `vars(self)`, `self` handed to code in
                # a lambda or a walrus: any field may change
                for field_name in values:
                    values[field_name] = Unresolved(f"{field_name} may be set at line "
                                                    f"{stmt.lineno} of __post_init__")
                continue
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Attribute):
                attr = stmt.targets[0].attr
                values[attr] = Unresolved(f"{attr} is set in __post_init__ (line "
                                          f"{stmt.lineno}) {when}") if when else \
                    module.evaluate(stmt.value, me, 1)
            elif isinstance(stmt, ast.If):
                test = truth(module.evaluate(stmt.test, me, 1))
                if test is None:
                    why = f"under a condition (line {stmt.lineno}) decided when it runs"
                    ends = [run(stmt.body, when or why), run(stmt.orelse, when or why)]
                    if ends[0] is True and ends[1] is True:
                        return True
                    if any(ends):
                        when = when or (f"after a return under a condition (line "
                                        f"{stmt.lineno}) decided when it runs")
                else:
                    end = run(stmt.body if test else stmt.orelse, when)
                    if end is True:
                        return True
                    when = when or (end if isinstance(end, str) else None)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                _handed(stmt, stmt.value, scope.params[0], values)
            elif not isinstance(stmt, (ast.Assert, ast.Pass, ast.Expr)):
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                        values[node.attr] = Unresolved(
                            f"{node.attr} is set in __post_init__ (line {stmt.lineno})")
        return False

    run(scope.body, None)
    return replace(call, kwargs=values)


def _escapes(stmt: ast.stmt, me: str) -> bool:
    """Whether ``stmt`` reaches the instance past plain ``self.x`` (``self.__dict__``,
    ``vars(self)``, ``self`` passed to a call other than the statement's own, which
    :func:`_handed` reads with :data:`SETTERS`)."""
    own = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
    for count, node in enumerate(ast.walk(stmt)):
        if count > 4096:
            return True
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == me and node.attr in ("__dict__", "__setattr__"):
            return True
        if isinstance(node, ast.Call) and node is not own and any(
                isinstance(a, ast.Name) and a.id == me
                for a in (*node.args, *(k.value for k in node.keywords))):
            return True
    return False


def _handed(stmt: ast.stmt, node: ast.Call, me: str, values: dict[str, Any]) -> None:
    """``f(self)`` in ``__post_init__``: what ``f`` may set is Unresolved (:data:`SETTERS`)."""
    if not any(isinstance(a, ast.Name) and a.id == me for a in node.args) and \
            not any(isinstance(k.value, ast.Name) and k.value.id == me for k in node.keywords):
        return
    func = node.func.attr if isinstance(node.func, ast.Attribute) else \
        node.func.id if isinstance(node.func, ast.Name) else ""
    for field_name in SETTERS.get(func, tuple(values)):
        values[field_name] = Unresolved(f"{field_name} may be set by {func or 'a call'}(self) "
                                        f"in __post_init__ (line {stmt.lineno})")


def settled(module: Module, name: str, call: Call) -> Call:
    """``call`` with each field the job sets again outside ``__post_init__`` (``args.x =
    ...``, ``if args.x is None: args.x = ...``) Unresolved, unless that statement does not run
    (its condition false with ``module``, which binds the command to ``call``)."""
    kwargs = dict(call.kwargs)
    for scope in module.scopes:
        owner = module.owners.get(id(scope))
        if owner is not None and owner[1] == "__post_init__" or not reached(module, scope):
            continue                # (a command the launch line does not run: not reached)
        for root, sets in scope.sets.items():
            if root not in scope.params:
                continue
            for path, _value, line, guards in sets:
                if len(path) != 1 or path[0] not in kwargs:
                    continue
                state = module.runs(guards, scope) if guards else True
                if state is not False:
                    kwargs[path[0]] = Unresolved(
                        f"{path[0]} is set again at line {line} ({scope.name}())", line)
    return replace(call, kwargs=kwargs)
