"""jsonargparse ``CLI(fn)``: launch-line flags bound to a function's parameters (issue 22,
holdout13 lightning-thunder).

A benchmark script may hand its whole command line to jsonargparse::

    def benchmark_main(return_metrics_as_json=False, json_path="", **kwargs) -> None:
        benchmark = Benchmark_litGPT(**kwargs)
        ...
    if __name__ == "__main__":
        from jsonargparse import CLI
        CLI(benchmark_main)

(Lightning-AI/lightning-thunder 1e22aacb, thunder/benchmarks/benchmark_litgpt.py:916-921,
:1046), run as ``torchrun ... benchmark_litgpt.py --use_torchao_fp8_linear true``. The rules are
jsonargparse's, read at tag v4.44.0 (e1b7cf86, the release of late 2025):

- ``CLI`` is ``auto_cli`` (_cli.py:25-27); one component's parameters are the parser's options,
  a list of components (or none: every function and class of the module, _cli.py:64-72) makes
  each a subcommand named as the function (_cli.py:108-111), the first word on the line;
  a class component takes its ``__init__`` parameters (its methods are subcommands: not followed
  here); ``args=[...]`` replaces the command line (_cli.py:31-38);
- a parameter ``name`` is the option ``--name`` as written, no ``-`` for ``_``
  (_signatures.py:389-390); argparse's unique prefixes are accepted (jsonargparse keeps
  ``allow_abbrev``); a parameter starting with ``_`` that has a default is no option
  (_signatures.py:371-372); a required positional-or-keyword one is positional
  (``as_positional=True``, _cli.py:35);
- a value is converted by the annotation: ``str`` keeps the word, ``bool`` / ``int`` / ``float``
  load it as YAML (_typehints.py:789-797; ``true``/``false``/``yes``/``no``/``on``/``off`` in
  any of PyYAML's three cases are booleans, anything else is refused), ``X | None`` also takes
  ``null``, ``Literal[...]`` its values; no annotation with a default is ``type(default) | Any``
  (_signatures.py:376-377): the YAML value. Another annotation is Unresolved;
- ``**kwargs`` passed on as ``T(**kwargs)`` to a function or class of the file gets ``T``'s
  parameters as options too, less those the call gives itself (the AST resolver,
  _parameter_resolvers.py:760-810): its value here is the mapping of each to the launch line's
  value or ``T``'s default;
- ``--config FILE`` may set any of them (ActionConfigFile, _cli.py:95): one not given after it
  is Unresolved, as is every parameter when the line has a word jsonargparse refuses (an
  unknown option), ``--help`` or ``--print_config``, or a word the shell makes when it runs.

Nothing is imported or run; a lambda, a call of something not of the file, or two ``CLI`` calls
leave the parameters Unresolved with why. A ``CLI`` call that never runs (under a test decided
false, in a function nothing calls) binds nothing; words after ``--`` are positionals.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from preflight.reading.pyoption import late_word
from preflight.reading.pyvalues import MAX_DEPTH, Ref, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

NOT_CLI = object()
"""What :func:`received` gives for a parameter jsonargparse does not fill."""
MAX_WORDS = 4096
"""Launch-line words read; a longer line leaves the parameters Unresolved."""
MAX_KWARGS = 1024
"""Parameters of the callable ``**kwargs`` is passed to, read."""
_CLI = frozenset({"jsonargparse.CLI", "jsonargparse.auto_cli"})
_BOOLS = {w: v for v, words in ((True, ("true", "yes", "on")), (False, ("false", "no", "off")))
          for word in words for w in (word, word.capitalize(), word.upper())}
_NULLS = frozenset({"null", "Null", "NULL", "~", ""})
_FLOAT = re.compile(r"[-+]?(?:\d[\d_]*\.[\d_]*(?:[eE][-+]?\d+)?|\d[\d_]*[eE][-+]?\d+|"
                    r"\.[\d_]+(?:[eE][-+]\d+)?|\.(?:inf|Inf|INF))|\.(?:nan|NaN|NAN)")
_INT = re.compile(r"[-+]?(?:0|[1-9][\d_]*)")


class _Cli:
    """What the file's ``CLI(...)`` call gives: the components by subcommand name ('' for a
    single one), the words it parses, or why it is not followed."""

    def __init__(self, components: dict[str, str], argv: tuple[str, ...] | None,
                 why: Unresolved | None = None) -> None:
        self.components, self.argv, self.why = components, argv, why


def _find(module: Module) -> _Cli | None:
    """The file's jsonargparse ``CLI`` call, worked out once (None: there is none)."""
    if "jsonarg" in module.__dict__:
        return module.__dict__["jsonarg"]       # type: ignore[no-any-return]
    module.__dict__["jsonarg"] = None
    found: list[tuple[ast.Call, Scope]] = []
    dead: list[tuple[ast.Call, Scope]] = []
    for scope in module.scopes:
        for node in scope.calls:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                node.func.id if isinstance(node.func, ast.Name) else ""
            if name in ("CLI", "auto_cli"):
                func = module.evaluate(node.func, scope, 1)
                if isinstance(func, Ref) and func.name in _CLI:
                    (dead if _dead(module, node, scope) else found).append((node, scope))
    _unescape(module, [node for node, _ in dead])
    if not found:
        return None
    cli = _read(module, *found[0]) if len(found) == 1 else _Cli({}, None, Unresolved(
        "jsonargparse's CLI is called at lines " + ", ".join(str(n.lineno) for n, _ in found[:6]),
        found[0][0].lineno))
    module.__dict__["jsonarg"] = cli
    return cli


def _dead(module: Module, node: ast.Call, scope: Scope) -> bool:
    """A ``CLI(...)`` that never runs binds nothing (redteam10: one under ``if False:`` or in a
    function never called bound the launch line to ``main``, which the file calls itself):
    under a test decided false, or in a function nothing reaches (:func:`.pycallers.reached`)."""
    from preflight.reading.pycallers import reached

    guards = scope.call_guards.get(id(node))
    if guards and module.runs(guards, scope, depth=1) is False:
        return True
    return scope is not module.module and not reached(module, scope)


def _unescape(module: Module, dead: list[ast.Call]) -> None:
    """A function named only as a component of a ``CLI`` that never runs is not passed on as a
    value (:func:`.pycallers.call_sites`): its own calls in the file bind its parameters."""
    named = [a for node in dead for a in (*node.args, *(k.value for k in node.keywords))]
    names = [e for a in named for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else (a,))
             if isinstance(e, ast.Name)]
    wanted = {n.id for n in names} & module._escapes
    if not wanted:
        return
    callee = {id(c.func) for name in wanted for c in module._sites.get(name, [])}
    uses = Counter(n.id for n in ast.walk(module.tree) if isinstance(n, ast.Name) and
                   n.id in wanted and isinstance(n.ctx, ast.Load) and id(n) not in callee)
    seen = Counter(n.id for n in names)
    module._escapes.difference_update(name for name in wanted if uses[name] == seen[name])


def _read(module: Module, node: ast.Call, scope: Scope) -> _Cli:
    line = node.lineno
    given = node.args[0] if node.args else next(
        (k.value for k in node.keywords if k.arg == "components"), None)
    argv: tuple[str, ...] | None = module.argv
    args_kw = next((k.value for k in node.keywords if k.arg == "args"), None)
    if args_kw is not None:
        value = module.evaluate(args_kw, scope, 1)
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return _Cli({}, None, Unresolved(f"CLI(args=...) at line {line} is not a list of "
                                             "words the text gives", line))
        argv = tuple(value)
    if any(k.arg is None or k.arg == "set_defaults" for k in node.keywords):
        return _Cli({}, None, Unresolved(f"CLI(...) at line {line} sets defaults the text "
                                         "does not follow", line))
    if given is None:       # every function and class defined in the module (_cli.py:64-72)
        names = [n for n in (*module.functions, *module.classes)]
        return _Cli({n: n for n in names} if len(names) != 1 else {"": names[0]}, argv)
    if isinstance(given, ast.Name) and (given.id in module.functions or
                                        given.id in module.classes):
        return _Cli({"": given.id}, argv)
    if isinstance(given, (ast.List, ast.Tuple)) and given.elts and all(
            isinstance(e, ast.Name) and (e.id in module.functions or e.id in module.classes)
            for e in given.elts):
        names = [e.id for e in given.elts]      # type: ignore[attr-defined]
        return _Cli({n: n for n in names} if len(names) > 1 else {"": names[0]}, argv)
    what = "a lambda" if isinstance(given, ast.Lambda) else "what the text does not give"
    return _Cli({}, None, Unresolved(f"jsonargparse's CLI at line {line} runs {what}; its "
                                     "parameters are not followed", line))


def received(module: Module, scope: Scope, name: str, depth: int = 0) -> Any:
    """``name`` (a parameter of ``scope``, or its ``**kwargs``) as jsonargparse fills it from
    the launch line; :data:`NOT_CLI` when ``scope`` is no component of the file's ``CLI``."""
    owner = module.owners.get(id(scope))
    if owner is None or scope.node is None:
        return NOT_CLI
    cls, func = owner
    target = cls if cls is not None and func == "__init__" else func if cls is None else None
    cli = _find(module) if target is not None else None
    if cli is None or (cli.why is None and target not in cli.components.values()):
        return NOT_CLI
    if cli.why is not None:
        return cli.why
    label = f"{name} of {target}() (jsonargparse CLI)"
    if cli.argv is None:
        return Unresolved(f"{label} comes from the command line; no launch line that runs "
                          "this script was read", scope.node.lineno)
    words = cli.argv
    if len(words) > MAX_WORDS:
        return Unresolved(f"{label}: a launch line of more than {MAX_WORDS} words")
    if "" not in cli.components:        # subcommands: the first word names the one that runs
        command = next((w for w in words if not w.startswith("-")), None)
        if cli.components.get(command or "") != target:
            return Unresolved(f"{label}: the launch line runs the subcommand {command!r}")
        words = words[words.index(command) + 1:]
    params = _params(module, scope.node, cls is not None)
    kwarg = scope.node.args.kwarg
    resolved: dict[str, tuple[ast.expr | None, ast.expr | None]] = {}
    if kwarg is not None:
        resolved = _kwargs(module, scope, kwarg.arg, depth)
    options = {**{k: v for k, v in resolved.items() if k not in params}, **params}
    methods = cls is not None and any(      # CLI(Class) with public methods: the first
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("_")
        for n in module.classes[cls].body)  # word is one, its options are its own
    parsed = _parse(words, options, label, methods)
    if isinstance(parsed, Unresolved):
        return parsed
    if kwarg is not None and name == kwarg.arg:
        return {k: _value(module, k, options[k], parsed, label) for k in resolved
                if k not in params}
    if name not in params:      # `_x=default` is no option: the function gets its default
        default = _params(module, scope.node, cls is not None, hidden=True).get(name)
        return NOT_CLI if default is None or default[1] is None else \
            module.evaluate(default[1], module.module, 1)
    return _value(module, name, params[name], parsed, label)


def _params(module: Module, node: ast.FunctionDef | ast.AsyncFunctionDef,
            method: bool, hidden: bool = False
            ) -> dict[str, tuple[ast.expr | None, ast.expr | None]]:
    """Each parameter jsonargparse makes an option of: (annotation, default); ``hidden``: also
    those it does not (``_x`` with a default)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    skip = 1 if method else 0
    out = {a.arg: (a.annotation, d) for a, d in zip(positional[skip:], defaults[skip:])}
    out.update({a.arg: (a.annotation, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)})
    return {k: v for k, v in out.items() if hidden or not (k.startswith("_") and
                                                            v[1] is not None)}


def _kwargs(module: Module, scope: Scope, kwarg: str,
            depth: int) -> dict[str, tuple[ast.expr | None, ast.expr | None]]:
    """The parameters of what ``**kwarg`` is passed on to (``T(**kwargs)``, T a function or
    class of this file), less those the call gives itself."""
    out: dict[str, tuple[ast.expr | None, ast.expr | None]] = {}
    for node in scope.calls:
        if not (isinstance(node.func, ast.Name) and any(
                k.arg is None and isinstance(k.value, ast.Name) and k.value.id == kwarg
                for k in node.keywords)) or depth > MAX_DEPTH:
            continue
        callee = node.func.id
        init = module.methods.get((callee, "__init__")) if callee in module.classes else None
        fn = init.node if init is not None else module.functions[callee][0] \
            if callee in module.functions else None
        fields = _fields(module, callee) if fn is None and callee in module.classes else None
        got = _params(module, fn, init is not None) if fn is not None else fields or {}
        given = {k.arg for k in node.keywords if k.arg is not None}
        out.update((k, v) for k, v in list(got.items())[:MAX_KWARGS] if k not in given)
    return out


def _fields(module: Module, cls: str) -> dict[str, tuple[ast.expr | None, ast.expr | None]]:
    """A dataclass's ``__init__`` parameters: its annotated fields, with their defaults."""
    out: dict[str, tuple[ast.expr | None, ast.expr | None]] = {}
    for stmt in module.classes[cls].body[:MAX_KWARGS]:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            out[stmt.target.id] = (stmt.annotation, stmt.value)
    return out


def _parse(words: tuple[str, ...], options: dict[str, Any], label: str,
           stop: bool = False) -> dict[str, str | Unresolved] | Unresolved:
    """Each option's last word on the line (argparse: the last occurrence wins)."""
    names = [*options, "config", "print_config", "help"]
    got: dict[str, str | Unresolved] = {}
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if late_word(word):
            return Unresolved(f"{label} may be given by {word[:60]!r} on the launch line, "
                              "which is known only when it runs")
        if word == "--":
            break                       # argparse: every word after `--` is a positional
        if not word.startswith("--"):
            if stop:
                break                   # a subcommand: what follows is its own
            continue                    # positional words: not followed
        flag, eq, inline = word[2:].partition("=")
        match = [n for n in names if n == flag] or [n for n in names if n.startswith(flag)]
        if len(match) != 1:
            return Unresolved(f"{label}: jsonargparse refuses --{flag} on the launch line "
                              f"({'ambiguous' if match else 'no such parameter'})")
        if match[0] in ("help", "print_config"):
            return Unresolved(f"{label}: the launch line asks jsonargparse for --{match[0]} "
                              "and does not run the function")
        if not eq and i >= len(words):
            return Unresolved(f"{label}: --{flag} is given without a value")
        value = inline if eq else words[i]
        i += 0 if eq else 1
        if match[0] == "config":        # a config file may set any option given before it
            got = {k: Unresolved(f"{label}: --config {value} may set it") for k in options}
            continue
        got[match[0]] = Unresolved(f"{label}: --{flag} {value[:60]!r} is known only when the "
                                   "line runs") if late_word(value) else value
    return got


def _value(module: Module, name: str, spec: tuple[ast.expr | None, ast.expr | None],
           parsed: dict[str, str | Unresolved], label: str) -> Any:
    note, default = spec
    if name not in parsed:
        if default is None:
            return Unresolved(f"{label}: a required parameter the launch line does not give "
                              "as an option")
        return module.evaluate(default, module.module, 1)
    raw = parsed[name]
    if isinstance(raw, Unresolved):
        return raw
    kind = ast.unparse(note) if note is not None else None
    if kind is None:
        kind = {bool: "bool", int: "int", float: "float", str: "str"}.get(
            type(module.evaluate(default, module.module, 1)) if default is not None
            else type(None), "any")
    return converted(kind.replace(" ", ""), raw, f"--{name} {raw[:60]!r}")


def converted(kind: str, raw: str, what: str) -> Any:
    """``raw`` as jsonargparse makes it a value of the annotation written ``kind``."""
    for wrap in ("Optional[", "typing.Optional["):
        if kind.startswith(wrap) and kind.endswith("]"):
            kind = kind[len(wrap):-1] + "|None"
    parts = kind.split("|")
    if len(parts) > 1 and "None" in parts:
        if raw in _NULLS:
            return None
        kind = "|".join(p for p in parts if p != "None")
    if kind.startswith(("Literal[", "typing.Literal[")):
        values = re.findall(r"""['"]([^'"]*)['"]""", kind)
        return raw if raw in values else Unresolved(f"{what}: jsonargparse accepts only "
                                                    f"{kind}")
    loaded = _yaml(raw)
    if kind == "str":
        return raw
    if kind == "bool" and isinstance(loaded, bool):
        return loaded
    if kind == "int" and isinstance(loaded, int) and not isinstance(loaded, bool):
        return loaded
    if kind == "float" and isinstance(loaded, (int, float)) and not isinstance(loaded, bool):
        return float(loaded)
    if kind == "any":
        return loaded
    if kind in ("bool", "int", "float"):
        return Unresolved(f"{what}: jsonargparse refuses it for a {kind} parameter")
    return Unresolved(f"{what}: a value of type {kind[:60]} that jsonargparse parses")


def _yaml(raw: str) -> Any:
    """A scalar as jsonargparse's YAML loader reads it (PyYAML's resolvers, its own float)."""
    if raw in _BOOLS:
        return _BOOLS[raw]
    if raw in _NULLS:
        return None
    if _INT.fullmatch(raw) and len(raw) < 4300:
        return int(raw.replace("_", ""))
    if _FLOAT.fullmatch(raw) and len(raw) < 4300:
        try:
            return float(raw.replace("_", ""))
        except ValueError:
            return raw
    return raw
