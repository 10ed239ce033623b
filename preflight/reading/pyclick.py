"""click (and typer) options bound to the parameters of the function they decorate (issue 22,
holdout6).

A training script may take its settings through click instead of argparse::

    @click.option("--fp8-recipe", default=None)
    @click.option("--include-lm-head", is_flag=True)
    @click.command()
    def main(fp8_recipe, include_lm_head): ...

click calls ``main`` with each option's value as the keyword its name gives, so the value on
the launch line (``python3 train.py --fp8-recipe mxfp8``) is the parameter's value in the
function (:mod:`.pysource` reads it there, as it reads ``args.x`` of argparse). The rules are
click's, read at tag 8.3.1 (src/click/core.py):

- the name (``Option._parse_decls``, core.py:2891-2945): a declaration that is an identifier
  names the parameter; otherwise the longest-prefixed option (``--`` before ``-``) with its
  prefix cut, ``-`` as ``_``, lower-cased (``-f/--fp8-recipe`` -> ``fp8_recipe``); ``--x/--no-x``
  (or ``/x;...`` after a leading ``/``) gives ``--no-x`` as a secondary option;
- flags (core.py:2770-2826): ``is_flag``, or implied by ``flag_value`` or a secondary option;
  a boolean flag stores True (its secondary False) and defaults to False;
- the type (``Parameter.__init__``, core.py:2155: ``convert_type(type, default)``): ``type=``
  (``int``, ``float``, ``click.INT`` ..., ``click.Choice([...])``), else guessed from the
  default (``default=5`` is an INT option);
- long options are matched whole: click's parser knows no abbreviation (parser.py:359-366 at
  8.3.1: an unknown ``--fp8`` is NoSuchOption); ``multiple``, ``count`` and ``nargs`` are
  options of an action the text does not follow.

Anything else (a declaration or a default the text does not give) leaves the option out, so the
parameter stays as :mod:`.pycallers` reads it. Where the value does not come from the launch line
or the default the text shows, it is Unresolved (redteam4, issue 21: each was read as the
default, so ``--fp8-recipe`` given through ``FP8_RECIPE`` read as "no FP8"): an option not given
takes ``envvar=`` (``Parameter.consume_value``, core.py:2318-2320), a ``default_map`` or an
``auto_envvar_prefix`` variable, or asks at the terminal (``prompt=``); a ``callback=`` returns
the value; two options filling one parameter; and a boolean flag with ``default=True`` and no
``flag_value``, which stores ``not default`` (False) up to click 8.2.1 (core.py:2614 at 8.2.1)
and True from 8.2.2 (core.py:2618 at 8.2.2; 2826 at 8.3.1): the installed click decides.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from preflight.reading import pysig
from preflight.reading.pyoption import Arg
from preflight.reading.pyvalues import Call, Ref, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

MAX_OPTIONS = 256
"""Decorators of one function looked at."""
_OPTION = frozenset({"click.option", "click.decorators.option"})
_TYPES = {"builtins.int": "int", "click.INT": "int", "click.types.INT": "int",
          "builtins.float": "float", "click.FLOAT": "float", "click.types.FLOAT": "float",
          "builtins.str": "str", "click.STRING": "str", "click.types.STRING": "str",
          "click.Path": "str", "click.types.Path": "str"}
_UNSET = object()


def options(module: Module, scope: Scope) -> dict[str, Arg]:
    """The click (or typer) options of the function of ``scope``, by the parameter each fills."""
    node = scope.node
    if node is None:
        return {}
    if _typer_command(module, node):
        return _typer(module, node)
    out: dict[str, Arg] = {}
    for dec in node.decorator_list[:MAX_OPTIONS]:
        if not (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and
                dec.func.attr == "option"):
            continue                    # cheap: only `x.option(...)` can be one
        value = module.evaluate(dec, module.module, 1)
        if isinstance(value, Call) and value.func in _OPTION:
            arg = option(value)
            if arg is not None and arg.dest in scope.params:
                if arg.dest in out:     # which of the two fills it is click's processing order
                    arg = replace(out[arg.dest], action="other", default=Unresolved(
                        f"two options fill {arg.dest} (lines {out[arg.dest].line} and "
                        f"{arg.line})", arg.line))
                out[arg.dest] = arg
    return _from_settings(module, out)


def _from_settings(module: Module, out: dict[str, Arg]) -> dict[str, Arg]:
    """Every option's default Unresolved where the file gives click an ``auto_envvar_prefix``
    or a ``default_map`` (a command's ``context_settings``, or the call that runs it): an option
    not on the launch line then takes its variable or the map's value."""
    if not out:
        return out
    for node in ast.walk(module.tree):
        key = node.arg if isinstance(node, ast.keyword) else node.value if \
            isinstance(node, ast.Constant) else node.attr if isinstance(node, ast.Attribute) \
            else None
        if key in ("auto_envvar_prefix", "default_map"):
            line = getattr(node, "lineno", 0)
            return {dest: replace(arg, default=Unresolved(
                f"click takes {'/'.join(arg.flags)} from its {key} (line {line}) when the "
                "launch line does not give it", arg.line)) for dest, arg in out.items()}
    return out


def _split_opt(opt: str) -> tuple[str, str]:
    """click's ``_split_opt``: (prefix, name) of an option string."""
    first = opt[:1]
    if first.isalnum():
        return "", opt
    if opt[1:2] == first:
        return opt[:2], opt[2:]
    return first, opt[1:]


def option(call: Call) -> Arg | None:
    """The option a ``click.option(...)`` call declares, as click builds it (module docstring);
    None where the text does not give its declarations."""
    if not call.args or not all(isinstance(a, str) for a in call.args):
        return None
    name: str | None = None
    opts: list[str] = []
    secondary: list[str] = []
    possible: list[tuple[str, str]] = []
    for decl in call.args:
        if decl.isidentifier():
            if name is not None:
                return None             # click: "Name defined twice"
            name = decl
            continue
        split = ";" if decl[:1] == "/" else "/"
        if split in decl:
            first, second = decl.split(split, 1)
            if first.rstrip():
                possible.append(_split_opt(first.rstrip()))
                opts.append(first.rstrip())
            if second.strip():
                secondary.append(second.strip())
        else:
            possible.append(_split_opt(decl))
            opts.append(decl)
    if name is None and possible:
        possible.sort(key=lambda x: -len(x[0]))     # long options first (stable, as click)
        name = possible[0][1].replace("-", "_").lower()
    if name is None or not name.isidentifier() or not (opts or secondary):
        return None
    kw = call.kwargs
    default = kw.get("default", _UNSET)
    flag_value = kw.get("flag_value", _UNSET)
    is_flag = kw.get("is_flag")
    if is_flag is None:
        is_flag = flag_value is not _UNSET or bool(secondary)
    shown = "/".join(opts or secondary)
    if kw.get("envvar") is not None:
        default = Unresolved(f"{shown} takes ${kw['envvar']} when the launch line does not "
                             "give it", call.line)
    elif kw.get("prompt") not in (None, False):
        default = Unresolved(f"{shown} is asked at the terminal when the launch line does not "
                             "give it", call.line)
    if not isinstance(is_flag, bool) or isinstance(default, (Call, Ref)) or \
            kw.get("multiple") or kw.get("count") or kw.get("nargs", 1) != 1 or \
            kw.get("callback") is not None:
        if not isinstance(default, Unresolved):
            default = Unresolved(f"{shown} is an option whose value the text does not follow "
                                 "(a callback, multiple, count or nargs)", call.line) \
                if kw.get("callback") is not None else None
        return Arg(name, tuple(opts), default, None, call.line, action="other", abbrev=False,
                   off=tuple(secondary))
    if is_flag:
        if flag_value is _UNSET or isinstance(flag_value, bool):
            store = True if flag_value is _UNSET else flag_value
            if flag_value is _UNSET and default is not _UNSET and default and not secondary:
                store = Unresolved(f"{shown} with default={default!r}: click up to 8.2.1 "
                                   "stores False, from 8.2.2 True", call.line)
            value = False if default is _UNSET else default
        else:
            store, value = flag_value, None if default is _UNSET else default
        return Arg(name, tuple(opts), value, store, call.line, action="const", abbrev=False,
                   off=tuple(secondary))
    return Arg(name, tuple(opts), None if default is _UNSET else default, None, call.line,
               _convert(kw.get("type"), default), _choices(kw.get("type")), abbrev=False)


def _convert(kind: Any, default: Any) -> str:
    if kind is None:            # guessed from the default (click's convert_type)
        if isinstance(default, bool):
            return "other"
        return "int" if isinstance(default, int) else \
            "float" if isinstance(default, float) else "str"
    if isinstance(kind, Ref):
        return _TYPES.get(kind.name, "other")
    if isinstance(kind, Call) and kind.func in ("click.Choice", "click.types.Choice"):
        return "str"
    return "other"


def _choices(kind: Any) -> tuple[Any, ...] | None:
    if isinstance(kind, Call) and kind.func in ("click.Choice", "click.types.Choice") and \
            kind.args and isinstance(kind.args[0], list) and \
            kind.value("case_sensitive", True) is True:
        return tuple(kind.args[0])
    return None


def _typer_command(module: Module, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``@app.command()`` with ``app = typer.Typer(...)``, or ``typer.run(main)``."""
    for dec in node.decorator_list[:MAX_OPTIONS]:
        func = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(func, ast.Attribute) and func.attr == "command":
            owner = module.evaluate(func.value, module.module, 1)
            if isinstance(owner, Call) and owner.func in ("typer.Typer", "typer.main.Typer"):
                return True
    return any(isinstance(c, ast.Call) and c.args and isinstance(c.args[0], ast.Name) and
               c.args[0].id == node.name and isinstance(c.func, ast.Attribute) and
               c.func.attr == "run" and isinstance(
                   f := module.evaluate(c.func, module.module, 1), Ref) and
               f.name in ("typer.run", "typer.main.run") for c in module.module.calls)


def _typer(module: Module, node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Arg]:
    """A typer command's options, as typer turns each parameter into one (typer/main.py
    ``get_click_param`` at 0.27.1, l.1632-1730): a parameter with a plain default, or with
    ``typer.Option(...)`` as its default or in ``Annotated[...]``, is an option named by its
    declarations, else ``--`` + the name with ``_`` as ``-`` (``get_default_option_flag_name``),
    ``--x/--no-x`` for a ``bool``; one without a default is an argument (not read here). The
    option is then click's (:func:`option`)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = pysig.defaults(args)
    out: dict[str, Arg] = {}
    for param in [*positional, *args.kwonlyargs][:MAX_OPTIONS]:
        kind, info = _annotation(module, param.annotation)
        given = defaults.get(param.arg)
        default: Any = _UNSET if given is None else module.evaluate(given, module.module, 1)
        if isinstance(default, Call) and default.func in ("typer.Option", "typer.params.Option"):
            info, default = default, default.args[0] if default.args else \
                default.kwargs.get("default", _UNSET)
            decls = [a for a in info.args[1:] if isinstance(a, str)]
        elif info is not None:
            decls = [a for a in info.args if isinstance(a, str) and a.startswith("-")]
        elif given is not None:
            decls = []
        else:
            continue                    # an argument (positional), or not an option
        if isinstance(default, Unresolved) and "llipsis" in default.reason:
            default = _UNSET            # `...`: required
        flag = kind == "bool"
        name = param.arg.replace("_", "-")
        decls = decls or [f"--{name}/--no-{name}" if flag else f"--{name}"]
        kwargs: dict[str, Any] = {} if default is _UNSET else {"default": default}
        kwargs.update({k: info.kwargs[k] for k in ("envvar", "prompt", "callback")
                       if info is not None and k in info.kwargs})
        if flag:
            kwargs["is_flag"] = True
        elif kind in ("int", "float", "str"):
            kwargs["type"] = Ref(f"builtins.{kind}")
        got = option(Call("click.option", param.lineno, (param.arg, *decls), kwargs))
        if got is not None:
            out[param.arg] = got
    return out


def _annotation(module: Module, note: ast.expr | None) -> tuple[str | None, Call | None]:
    """(the main type's name, the ``typer.Option(...)`` of an ``Annotated[...]``)."""
    info: Call | None = None
    for _ in range(4):
        if isinstance(note, ast.BinOp) and isinstance(note.op, ast.BitOr):
            note = note.left            # `str | None`
        elif isinstance(note, ast.Subscript):
            head = module.evaluate(note.value, module.module, 1)
            items = note.slice.elts if isinstance(note.slice, ast.Tuple) else [note.slice]
            if isinstance(head, Ref) and head.name.endswith("Annotated") and len(items) > 1:
                got = module.evaluate(items[1], module.module, 1)
                info = got if isinstance(got, Call) and got.name == "Option" else None
            elif not (isinstance(head, Ref) and head.name.endswith("Optional")):
                return None, info
            note = items[0]
        else:
            break
    if isinstance(note, ast.Name) and note.id in ("bool", "int", "float", "str"):
        return note.id, info
    return None, info
