"""click options bound to the parameters of the function they decorate (issue 22, holdout6).

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
parameter stays as :mod:`.pycallers` reads it.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from preflight.reading.pyvalues import Arg, Call, Ref

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
    """The click options of the function of ``scope``, by the parameter each one fills."""
    node = scope.node
    if node is None or not node.decorator_list:
        return {}
    out: dict[str, Arg] = {}
    for dec in node.decorator_list[:MAX_OPTIONS]:
        if not (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and
                dec.func.attr == "option"):
            continue                    # cheap: only `x.option(...)` can be one
        value = module.evaluate(dec, module.module, 1)
        if isinstance(value, Call) and value.func in _OPTION:
            arg = option(value)
            if arg is not None and arg.dest in scope.params:
                out.setdefault(arg.dest, arg)
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
    if not isinstance(is_flag, bool) or isinstance(default, (Call, Ref)) or \
            kw.get("multiple") or kw.get("count") or kw.get("nargs", 1) != 1:
        return Arg(name, tuple(opts), None, None, call.line, action="other", abbrev=False,
                   off=tuple(secondary))
    if is_flag:
        if flag_value is _UNSET or isinstance(flag_value, bool):
            store = True if flag_value is _UNSET else flag_value
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
