"""python-fire ``fire.Fire(...)``: launch-line words bound to a function's parameters (issue 22,
holdout18 AMD pytorch-training-benchmark).

A benchmark script may hand its whole command line to python-fire::

    def train(config_file: str, model_name: str, batch_size: int = 1, ...,
              enable_fp8: bool = False, enable_compile: bool = True, seed: int = 1024):
        ...
    if __name__ == '__main__':
        fire.Fire(train)

(AMD-AIG-AIMA/pytorch-training-benchmark 927d18fb, train_fsdp.py:55-65, :214), run as
``torchrun ... train_fsdp.py configs/mistral-7b-v0.1.json mistral --batch_size 4 --enable_fp8
True``. The rules are python-fire's, read at tag v0.7.1 (8ea2f631, fire/core.py, parser.py,
decorators.py):

- ``Fire(component, command)``: ``command`` (a string, shlex-split, or a list) replaces the
  command line (core.py:111-120); the words after the last lone ``--`` are Fire's own flags
  (parser.SeparateFlagArgs): ``--help``/``-h``/``--completion``/``--interactive`` there show help
  or a shell instead of running (core.py:140-160) and are Unresolved here;
- a function or class component is called with the words up to the first lone ``-`` (the
  separator, core.py:446-452); a dict (``Fire({"train": train})``) or no component (the module's
  names, core.py:125-132) takes its first word as the key (core.py:503-535), then calls that;
  a class's ``__init__`` takes flags only, no positionals (decorators.py:94-95: positional words
  only for routines), and the next word names the method called with what is left (core.py:
  537-555, _GetMember);
- binding (core.py:_ParseKeywordArgs, :816-933, and _ParseArgs, :757-813): ``--name value``,
  ``--name=value``, ``-name``, ``-n`` (the only parameter starting with ``n``; two is an error),
  ``-`` in a name read as ``_``; ``--flag`` alone (last word, or the next is a flag) is ``True``,
  ``--noflag`` alone is ``False`` for a parameter ``flag``; the last occurrence wins; a flag
  naming no parameter is left over (for the result, not the function); each parameter not given
  by a flag takes the next unused positional word, else its default, else Fire refuses;
- a value is parsed with no regard to the annotation (parser.DefaultParseValue): a Python literal
  (``True``, ``False``, ``None``, numbers, containers) with bare words read as strings, anything
  else (``true``, a path) the string itself. So ``--enable_fp8 true`` is the string ``'true'``
  (truthy) and ``--enable_fp8 False`` is ``False``.

Nothing is imported or run; a component that is not a function or class of the file (an
imported name, a lambda, a call), two ``Fire`` calls, ``**kwargs`` into ``Fire``, or a launch word
the shell makes at run time leave the parameters Unresolved with why. A ``Fire`` that never runs
binds nothing (as :func:`.pyjsonarg._dead`).
"""

from __future__ import annotations

import ast
import re
import shlex
from typing import TYPE_CHECKING, Any

from preflight.reading.pyjsonarg import MAX_WORDS, _dead, _fields, _unescape
from preflight.reading.pyoption import late_word
from preflight.reading.pyrebound import rebound
from preflight.reading.pyvalues import Ref, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pyscopes import Scope
    from preflight.reading.pysource import Module

NOT_FIRE = object()
"""What :func:`received` gives for a parameter python-fire does not fill."""
MAX_KEYS = 512
"""Entries of a ``Fire({...})`` dict read; a larger one leaves the parameters Unresolved."""
MAX_VALUE = 10_000
"""Characters of one launch-line value parsed as a literal; a longer one is Unresolved."""
_FIRE = frozenset({"fire.Fire", "fire.core.Fire"})
_SINGLE = re.compile(r"-[a-zA-Z](=|$)")
_MULTI = re.compile(r"-[a-zA-Z]")
_HELP = frozenset({"--help", "-h", "--completion", "--interactive", "-i"})


class _Fire:
    """The file's ``Fire`` call: the component by key ('' for one callable), whether a key is
    read first, the words, and why it is not followed (with the names it concerns)."""

    def __init__(self, components: dict[str, str], keyed: bool, argv: tuple[str, ...] | None,
                 why: Unresolved | None = None, names: frozenset[str] = frozenset()) -> None:
        self.components, self.keyed, self.argv = components, keyed, argv
        self.why, self.names = why, names


def _find(module: Module) -> _Fire | None:
    """The file's python-fire call, worked out once (None: there is none)."""
    if "pyfire" in module.__dict__:
        return module.__dict__["pyfire"]        # type: ignore[no-any-return]
    module.__dict__["pyfire"] = None
    found: list[tuple[ast.Call, Scope]] = []
    dead: list[ast.Call] = []
    for scope in module.scopes:
        for node in scope.calls:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                node.func.id if isinstance(node.func, ast.Name) else ""
            if name == "Fire":
                func = module.evaluate(node.func, scope, 1)
                if isinstance(func, Ref) and func.name in _FIRE:
                    if _dead(module, node, scope):
                        dead.append(node)
                    else:
                        found.append((node, scope))
    _unescape(module, dead)
    if not found:
        return None
    if len(found) == 1:
        got = _read(module, *found[0])
    else:
        names = frozenset(n.id for node, _ in found for n in ast.walk(node)
                          if isinstance(n, ast.Name))
        got = _Fire({}, False, None, Unresolved(
            "python-fire's Fire is called at lines " +
            ", ".join(str(n.lineno) for n, _ in found[:6]), found[0][0].lineno), names)
    module.__dict__["pyfire"] = got
    return got


def _read(module: Module, node: ast.Call, scope: Scope) -> _Fire:
    line = node.lineno
    given = node.args[0] if node.args else next(
        (k.value for k in node.keywords if k.arg == "component"), None)
    command = node.args[1] if len(node.args) > 1 else next(
        (k.value for k in node.keywords if k.arg == "command"), None)
    own = frozenset((*module.functions, *module.classes))
    names = frozenset(n.id for n in ast.walk(given) if isinstance(n, ast.Name)) \
        if given is not None else own
    if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred)
                                                      for a in node.args):
        return _Fire({}, False, None, Unresolved(f"Fire(...) at line {line} takes arguments "
                                                 "the text does not give", line), names)
    argv: tuple[str, ...] | None = module.argv
    if command is not None:
        value = module.evaluate(command, scope, 1)
        if isinstance(value, str) and len(value) <= MAX_VALUE:
            try:
                argv = tuple(shlex.split(value))
            except ValueError:
                value = None
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            argv = tuple(value)
        elif not isinstance(value, str):
            return _Fire({}, False, None, Unresolved(
                f"Fire(command=...) at line {line} is not words the text gives", line), names)
    if given is None:       # the caller's names (core.py:125-132): the first word picks one
        if scope is not module.module:
            return _Fire({}, False, None, Unresolved(
                f"Fire() at line {line} runs a name of {scope.name}()'s locals", line), names)
        return _Fire({n: n for n in own}, True, argv)
    again = rebound(module.tree, names & own)
    if again is not None:     # `from helpers import train` after `def train`: Fire runs that
        return _Fire({}, False, None, Unresolved(
            f"Fire(...) at line {line} runs {again[0]}, which the file binds again at line "
            f"{again[1]} (an import or assignment): which one runs is not followed", line),
            names)
    if isinstance(given, ast.Name) and given.id in own:
        return _Fire({"": given.id}, False, argv)
    if isinstance(given, ast.Dict) and len(given.keys) <= MAX_KEYS:
        keys = [k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
                for k in given.keys]
        if None not in keys:
            return _Fire({str(k): v.id for k, v in zip(keys, given.values)
                          if isinstance(v, ast.Name) and v.id in own}, True, argv)
    what = "a lambda" if isinstance(given, ast.Lambda) else \
        f"{given.id}, which the file does not define" if isinstance(given, ast.Name) else \
        "what the text does not give"
    return _Fire({}, False, None, Unresolved(f"python-fire's Fire at line {line} runs {what}; "
                                             "its parameters are not followed", line), names)


def received(module: Module, scope: Scope, name: str, depth: int = 0) -> Any:
    """``name`` (a parameter of ``scope``) as python-fire fills it from the launch line;
    :data:`NOT_FIRE` when ``scope`` is not what the file's ``Fire`` calls."""
    owner = module.owners.get(id(scope))
    if owner is None or scope.node is None:
        return NOT_FIRE
    cls, func = owner
    target = cls if cls is not None else func
    fire = _find(module)
    if fire is None:
        return NOT_FIRE
    if fire.why is not None:
        return fire.why if target in fire.names else NOT_FIRE
    if target not in fire.components.values():
        return NOT_FIRE
    label = f"{name} of {func}() (python-fire)"
    if fire.argv is None:
        return Unresolved(f"{label} comes from the command line; no launch line that runs this "
                          "script was read", scope.node.lineno)
    words = list(fire.argv)
    if len(words) > MAX_WORDS:
        return Unresolved(f"{label}: a launch line of more than {MAX_WORDS} words")
    late = next((w for w in words if late_word(w)), None)
    if late is not None:
        return Unresolved(f"{label} may be given by {late[:60]!r} on the launch line, which is "
                          "known only when it runs")
    if "--" in words:       # Fire's own flags follow the last lone `--` (parser.py)
        cut = len(words) - 1 - words[::-1].index("--")
        if _HELP & set(words[cut + 1:]):
            return Unresolved(f"{label}: the launch line asks python-fire for help or a shell "
                              "and does not run the function")
        words = words[:cut]
    if fire.keyed:
        key = words[0].replace("-", "_") if words else ""
        if fire.components.get(words[0] if words else "",
                               fire.components.get(key)) != target:
            return Unresolved(f"{label}: the launch line runs {words[0][:60]!r}" if words else
                              f"{label}: the launch line names no command")
        words = words[1:]
    return _bound(module, scope.node, name, cls, func, words, label)


def _bound(module: Module, fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str,
           cls: str | None, func: str, words: list[str], label: str) -> Any:
    """The value of ``name`` once the class (if any) and the function have taken their words."""
    if cls is not None:
        init = module.methods.get((cls, "__init__"))
        node = module.classes[cls]
        if init is not None and init.node is not None:
            spec = _spec(init.node, method=True)
        elif any("dataclass" in ast.unparse(d) for d in node.decorator_list):
            spec = _Spec(list(_fields(module, cls)), set(), None, None)
        elif node.bases:
            return Unresolved(f"{label}: {cls}'s constructor is inherited; its flags are not "
                              "followed")
        else:
            spec = _Spec([], set(), None, None)
        if "-" in words:
            return Unresolved(f"{label}: the launch line uses python-fire's separator '-'")
        taken = _take(words, spec, positional=False)
        if isinstance(taken, Unresolved):
            return taken
        given, rest = taken
        if func == "__init__":
            return _value(module, fn, name, spec, given, [], label)
        if not rest or rest[0].replace("-", "_") != func:
            return Unresolved(f"{label}: the launch line calls {rest[0][:60]!r} of {cls}"
                              if rest else f"{label}: the launch line calls no method of {cls}")
        words = rest[1:]
    elif "-" in words:      # the separator: what follows goes to the result
        words = words[:words.index("-")]
    spec = _spec(fn, method=cls is not None)
    taken = _take(words, spec, positional=True)
    if isinstance(taken, Unresolved):
        return taken
    given, rest = taken
    return _value(module, fn, name, spec, given, rest, label)


class _Spec:
    """A callable's parameters as inspect.getfullargspec gives them (self left out)."""

    def __init__(self, args: list[str], kwonly: set[str], varargs: str | None,
                 varkw: str | None) -> None:
        self.args, self.kwonly, self.varargs, self.varkw = args, kwonly, varargs, varkw


def _spec(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> _Spec:
    a = node.args
    args = [p.arg for p in (*a.posonlyargs, *a.args)][1 if method else 0:]
    return _Spec(args, {p.arg for p in a.kwonlyargs}, a.vararg.arg if a.vararg else None,
                 a.kwarg.arg if a.kwarg else None)


def _flag(word: str) -> bool:
    """core.py _IsFlag: ``-x``, ``-x=..``, ``--...``, ``-word``; not ``-5``."""
    return word.startswith("--") or _MULTI.match(word) is not None or \
        _SINGLE.match(word) is not None


def _take(words: list[str], spec: _Spec, positional: bool
          ) -> tuple[dict[str, str], list[str]] | Unresolved:
    """core.py _ParseKeywordArgs: each flag's raw word (the last wins), and the positional words
    left; Unresolved where Fire refuses (an ambiguous ``-x``)."""
    names = [*spec.args, *sorted(spec.kwonly)]
    kwargs: dict[str, str] = {}
    rest: list[str] = []
    left: list[str] = []
    skip = False
    for index, word in enumerate(words):
        if skip:
            skip = False
            continue
        if not _flag(word):
            rest.append(word)
            continue
        key, eq, value = word.lstrip("-").partition("=")
        key = key.replace("-", "_")
        alone = not eq and (index + 1 == len(words) or _flag(words[index + 1]))
        keyword = ""
        if key in names or (alone and key.startswith("no") and key[2:] in names) or spec.varkw:
            keyword = key
        elif len(key) == 1:
            match = [n for n in names if n[:1] == key]
            if len(match) > 1:
                return Unresolved(f"python-fire refuses {word[:60]!r}: it could be any of "
                                  f"{', '.join(match[:6])}")
            keyword = match[0] if match else ""
        if keyword and not eq and alone:
            value = "True" if keyword in names or not keyword.startswith("no") else "False"
            keyword = keyword if keyword in names or not keyword.startswith("no") \
                else keyword[2:]
        elif keyword and not eq:
            value = words[index + 1]
        skip = not eq and not alone
        if keyword:
            kwargs[keyword] = value
        elif word in _HELP:     # core.py:206-236 _IsHelpShortcut: help, not a run
            return Unresolved(f"python-fire shows help for {word!r} and does not run")
        else:               # left over, after the positional words (core.py:750)
            left.extend(words[index:index + (1 if eq or alone else 2)])
    # a function's left-over flags go to its result; a class's name the method with the rest
    return kwargs, rest if positional else [*rest, *left]


def _value(module: Module, node: ast.FunctionDef | ast.AsyncFunctionDef, name: str,
           spec: _Spec, given: dict[str, str], rest: list[str], label: str) -> Any:
    """core.py _ParseArgs: a flag's value, else the next positional word, else the default."""
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults))
    defaults = [*defaults, *a.defaults][len(positional) - len(spec.args):]
    rest = list(rest)
    for arg, default in zip(spec.args, defaults):
        if arg in given:
            raw: str | None = given[arg]
        elif rest:
            raw = rest.pop(0)
        elif default is None:
            return Unresolved(f"{label}: python-fire refuses the line: no value for the "
                              f"required {arg}")
        else:
            raw = None
        if arg == name:
            return module.evaluate(default, module.module, 1) if raw is None and \
                default is not None else parsed(raw or "", f"{label}: {raw!r}")
    if name in spec.kwonly:
        default = dict(zip((p.arg for p in a.kwonlyargs), a.kw_defaults)).get(name)
        if name in given:
            return parsed(given[name], f"{label}: {given[name][:60]!r}")
        return Unresolved(f"{label}: python-fire refuses the line: the required flag "
                          f"--{name} is not given") if default is None else \
            module.evaluate(default, module.module, 1)
    if name == spec.varargs:
        return tuple(parsed(w, label) for w in rest)
    if name == spec.varkw:
        return {k: parsed(v, label) for k, v in given.items()
                if k not in spec.args and k not in spec.kwonly}
    return Unresolved(f"{label}: not a parameter python-fire fills")


def parsed(raw: str, what: str) -> Any:
    """parser.DefaultParseValue: a Python literal with bare words as strings, else the word."""
    if len(raw) > MAX_VALUE:
        return Unresolved(f"{what[:80]}: a value of more than {MAX_VALUE} characters")
    try:
        root = ast.parse(raw, mode="eval")
        if isinstance(root.body, ast.BinOp):
            return raw
        for node in ast.walk(root):
            for field, child in ast.iter_fields(node):
                if isinstance(child, list):
                    child[:] = [_word(c) for c in child]
                else:
                    setattr(node, field, _word(child))
        return ast.literal_eval(root)
    except (SyntaxError, ValueError, TypeError):
        return raw
    except (RecursionError, MemoryError):
        return Unresolved(f"{what[:80]}: nested too deeply for python-fire's parser")


def _word(node: Any) -> Any:
    """parser._Replacement: a bare name other than True/False/None is a string."""
    if isinstance(node, ast.Name) and node.id not in ("True", "False", "None"):
        return ast.copy_location(ast.Constant(node.id), node)
    return node
