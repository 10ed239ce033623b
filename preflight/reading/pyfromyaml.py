"""A field of a dataclass instance a job module's class builds: ``TrainingConfig()`` with its
defaults, or ``TrainingConfig.from_yaml(path)``, a classmethod that loads a YAML (or JSON) file
of the job into ``cls(**mapping)`` (holdout18: lccqqqqq/superposition-pretraining @ 51466cfd,
train_fp8.py:86 ``Accelerator(mixed_precision="fp8" if config.use_fp8 else "bf16")`` with
``config = TrainingConfig.from_yaml(args.config)`` (:309) and config.py:235-253, ``--config
configs/fineweb_edu_fp8.yaml`` holding ``use_fp8: true``: Unknown, "use_fp8 of from_yaml() is not
given in this file"), for :func:`.pyprops.attribute`.

Read, never run, as Python would build it: the field is the file's key where the mapping has it,
else the field's default (``x: T = v`` or ``field(default=v)``, a literal); the file is found as
the script opens it (next to the script, else under the job's roots), inside the job only: a
path outside is Unresolved with the reason and never opened. The classmethod is followed only in
the plain shape (``with open(path) as f: d = yaml.safe_load(f)`` or ``json.load``, optionally
``[KEY]``, then ``return cls(**d)``, with item sets of other keys in between), or in the nested
form ``return cls(a=A(**d.get('a', {})), ...)`` (:mod:`.pynested`; holdout19 bdh): a section's
field is then a call of that section's class; anything else --
a base class, ``__post_init__`` or a method the script calls that sets the field (or
``setattr``), a key that is no field (``cls(**d)`` raises TypeError), a computed default -- is
Unresolved with the reason. Files over the parser's limits are refused by :mod:`.parse`.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from preflight.reading import pynested
from preflight.reading.boundary import outside_reference
from preflight.reading.parse import Parsed, ParseError, parse_json, parse_yaml, read_text
from preflight.reading.pyinit import NOT_PLAIN, init_attr
from preflight.reading.pymodfile import module_file
from preflight.reading.pynested import Section
from preflight.reading.pyvalues import Call, Unresolved
from preflight.reading.refs import locate, outside, under_roots

if TYPE_CHECKING:
    from preflight.reading.pysource import Module

NOT_HERE = object()
"""Not this case: the caller goes on as before."""
_LOADERS = {"yaml.safe_load": parse_yaml, "yaml.load": parse_yaml, "yaml.full_load": parse_yaml,
            "json.load": parse_json}
_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__"})
MAX_FIELDS = 512


def member(module: Module, base: Call, attr: str, line: int) -> Any:
    """``base.attr`` where ``base`` builds a dataclass of a job module (module docstring);
    :data:`NOT_HERE` when ``base`` is no such call."""
    found = _class_of(module, base.func)
    if found is None:
        return NOT_HERE
    tree, cls, method, path = found
    name = f"{cls.name}.{method}()" if method else f"{cls.name}()"
    fields = _fields(cls)
    if fields is None and method is None and \
            (got := init_attr(cls, attr, base, line)) is not NOT_PLAIN:
        changed = _changed(module, tree, cls, attr, "__init__")
        return Unresolved(f"{attr} of {name} {changed}", line) if changed is not None else got
    if fields is None:
        return Unresolved(f"{attr} of {name}: {cls.name} is no plain dataclass of the job "
                          "(a base class, or not a @dataclass)", line)
    changed = _changed(module, tree, cls, attr, method)
    if changed is not None:
        return Unresolved(f"{attr} of {name} {changed}", line)
    data: Any = {}
    if method is not None:
        data = _loaded(module, cls, method, base, line)
        if isinstance(data, Unresolved):
            return Unresolved(f"{attr} of {name}: {data.reason}", line)
        extra = sorted(str(k) for k in data if k not in fields)
        if extra:
            return Unresolved(f"{attr} of {name}: the file's key {extra[0]!r} is no field of "
                              f"{cls.name} (cls(**mapping) raises TypeError)", line)
    built = {k: _section(module, tree, base, v, line) for k, v in data.items()
             if isinstance(v, Section)}
    failed = next((v for v in built.values() if isinstance(v, Unresolved)), None)
    if failed is not None:      # a section not known, or its class raises: nothing is sure
        return Unresolved(f"{attr} of {name}: {failed.reason}", line)
    if attr in data:
        return built.get(attr, data[attr])
    if attr not in fields:
        return Unresolved(f"{attr} is no field of {cls.name}", line)
    default = fields[attr]
    if default is None:
        return Unresolved(f"{attr} of {name}: the field has no default and is not given", line)
    try:
        return ast.literal_eval(default)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return Unresolved(f"{attr} of {name}: its default is computed when the script runs",
                          line)


def _section(module: Module, tree: ast.Module, base: Call, sec: Section, line: int) -> Any:
    """The call ``sec.cls(**sec.data)`` makes, as a :class:`Call` of that class (its fields
    then read as any such call's: the keyword, else the default); Unresolved where not known,
    the construction may raise, so the caller takes none of the sections then."""
    cls = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == sec.cls), None)
    fields = _fields(cls) if cls is not None else None
    if cls is None or fields is None:
        return Unresolved(f"{sec.cls} is no plain dataclass of that file", line)
    if isinstance(sec.data, Unresolved):
        return Unresolved(sec.data.reason, line)
    extra = sorted(str(k) for k in sec.data if k not in fields)
    if extra:
        return Unresolved(f"the file's key {extra[0]!r} is no field of {sec.cls} ({sec.cls}(**...) "
                      "raises TypeError)", line)
    lacking = sorted(k for k, v in fields.items() if v is None and k not in sec.data)
    if lacking:
        return Unresolved(f"{sec.cls}'s field {lacking[0]!r} has no default and is not given",
                      line)
    kwargs = {k: Unresolved(f"{k} of {sec.cls} {why}", line)
              if (why := _changed(module, tree, cls, str(k), None)) is not None else v
              for k, v in sec.data.items()}
    return Call(f"{base.func.rsplit('.', 2)[0]}.{sec.cls}", line, kwargs=kwargs)


def _class_of(module: Module, func: str) -> tuple[ast.Module, ast.ClassDef, str | None,
                                                 str] | None:
    """The class ``func`` calls (or calls a classmethod of) and the file it is in."""
    parts = func.split(".")
    for cut in (len(parts) - 1, len(parts) - 2):
        if cut < 1:
            continue
        owner, cls_name, method = ".".join(parts[:cut]), parts[cut], \
            ".".join(parts[cut + 1:]) or None
        if method is not None and "." in method:
            continue
        tree: ast.Module | None = module.tree
        path: str | None = module.path
        if owner != "__main__":
            path = module_file(owner, module.path)
            if path is None or os.path.realpath(path) == os.path.realpath(module.path):
                continue
            tree = _tree(module, path)
        cls = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == cls_name),
                   None) if tree is not None else None
        if cls is not None and tree is not None and path is not None and \
                (method is not None or owner != "__main__"):
            return tree, cls, method, path
    return None


def _tree(module: Module, path: str) -> ast.Module | None:
    from preflight.reading.pysource import parse
    made: dict[str, ast.Module | None] = module.__dict__.setdefault("_fromyaml", {})
    real = os.path.realpath(path)
    if real not in made:
        try:
            made[real] = parse(path, read_text(path))
        except (ParseError, OSError, RecursionError):
            made[real] = None
    return made[real]


def _fields(cls: ast.ClassDef) -> dict[str, ast.expr | None] | None:
    if cls.bases or cls.keywords or not any(
            (ast.unparse(d.func if isinstance(d, ast.Call) else d)).split(".")[-1] ==
            "dataclass" for d in cls.decorator_list[:8]):
        return None
    out: dict[str, ast.expr | None] = {}
    for stmt in cls.body[:MAX_FIELDS]:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and \
                "ClassVar" not in ast.unparse(stmt.annotation):
            value = stmt.value
            if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] == "field":
                value = next((k.value for k in value.keywords if k.arg == "default"), None)
            out[stmt.target.id] = value
    return out


def _changed(module: Module, tree: ast.Module, cls: ast.ClassDef, attr: str,
             method: str | None) -> str | None:
    """How the class's own code may change ``attr`` after it is built: ``__post_init__`` (run
    by the constructor) or a method the script calls, setting it or calling ``setattr``."""
    memo: dict[tuple[int, str, str | None], str | None] = \
        module.__dict__.setdefault("_fromyaml_changed", {})
    if (id(cls), attr, method) not in memo:     # asked per field at each reading of a use
        memo[id(cls), attr, method] = _sets(_called(module), cls, attr, method)
    return memo[id(cls), attr, method]


def _called(module: Module) -> frozenset[str]:
    """The method names the script calls (``x.name(...)``), found once per module."""
    got: frozenset[str] | None = module.__dict__.get("_fromyaml_called")
    if got is None:
        got = module.__dict__["_fromyaml_called"] = frozenset(
            n.func.attr for n in ast.walk(module.tree) if isinstance(n, ast.Call) and
            isinstance(n.func, ast.Attribute))
    return got


def _sets(called: frozenset[str], cls: ast.ClassDef, attr: str, method: str | None,
          ) -> str | None:
    for fn in cls.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name == method or \
                (fn.name != "__post_init__" and fn.name not in called):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and node.attr == attr and \
                    isinstance(node.ctx, ast.Store) or isinstance(node, ast.Call) and \
                    isinstance(node.func, ast.Name) and node.func.id == "setattr":
                return f"may be set by {cls.name}.{fn.name} (line {node.lineno})"
    return None


def _loaded(module: Module, cls: ast.ClassDef, method: str, base: Call, line: int) -> Any:
    """The mapping ``cls.method(path)`` passes to ``cls(**mapping)``, or Unresolved with why."""
    fn = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == method), None)
    if fn is None or not any(ast.unparse(d) == "classmethod" for d in fn.decorator_list) or \
            len(fn.args.args) < 2:
        return Unresolved(f"{method} is no classmethod of {cls.name} taking a path")
    me, param = fn.args.args[0].arg, fn.args.args[1].arg
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    shape = _shape(fn, me, param, returns)
    if isinstance(shape, str):
        return Unresolved(f"{cls.name}.{method} is not read ({shape})")
    loader, key, sets, nested = shape
    given = base.args[0] if base.args else base.kwargs.get(param)
    if isinstance(given, Unresolved):
        return Unresolved(f"the file it loads is not known: {given.reason}")
    if not isinstance(given, str):
        return Unresolved("the file it loads is not given in the text")
    path = locate(given, module.path) or under_roots(given)
    if path is None:
        away = outside(given, module.path)
        if away is not None:
            outside_reference(away, module.path, line, f"{cls.name}.{method} loads")
            return Unresolved(f"{given!r} lies outside the job and was not read")
        return Unresolved(f"{given!r} is not a file of the job")
    try:
        data = read_data(module, path, _LOADERS[loader])
    except (ParseError, OSError) as exc:
        return Unresolved(f"{os.path.basename(path)} cannot be read: {exc}")
    for part in key:
        data = data.get(part) if isinstance(data, dict) else None
    if not isinstance(data, dict):
        return Unresolved(f"{os.path.basename(path)} holds no mapping (cls(**...) raises)")
    if nested is not None:
        who = f"{cls.name}.{method}"
        return {k: pynested.section(data, v, sets, who, os.path.basename(path))
                if isinstance(v, pynested.Spec) else v for k, v in nested.items()}
    return {**data, **{k: Unresolved(f"{cls.name}.{method} sets it") for k in sets}}


def read_data(module: Module, path: str, parse: Callable[[str], Parsed]) -> Any:
    """``parse`` of the job's data file ``path``, read once per reading of ``module``: a call is
    evaluated at each of its call sites (a BioNeMo check read one config.json 19 times). Raises
    :class:`ParseError` / ``OSError`` as :func:`read_text` does, each time it is asked. The data is
    shared: callers copy before they change it."""
    cache: dict[tuple[str, Any], Any] = module.__dict__.setdefault("_data_files", {})
    key = (path, parse)
    if key not in cache:
        try:
            cache[key] = parse(read_text(path)).data
        except (ParseError, OSError) as exc:
            cache[key] = exc
    got = cache[key]
    if isinstance(got, (ParseError, OSError)):
        raise got
    return got


def _shape(fn: ast.FunctionDef, me: str, param: str, returns: list[ast.Return],
           ) -> tuple[str, tuple[str, ...], set[str], dict[str, Any] | None] | str:
    """(loader, keys, keys set after, nested sections or None) of ``d = loader(f)[k]...`` ...
    ``return cls(**d)`` (or ``return cls(a=A(**d.get('a', {})), ...)``), or why not."""
    form = pynested.sections(returns, me)
    nested: dict[str, Any] | None = None
    if isinstance(form, str):
        if len(returns) != 1 or not isinstance(call := returns[0].value, ast.Call) or \
                not isinstance(call.func, ast.Name) or call.func.id != me or call.args or \
                len(call.keywords) != 1 or call.keywords[0].arg is not None or \
                not isinstance(call.keywords[0].value, ast.Name):
            return f"it does not end in one `return cls(**mapping)`{form}"
        name = call.keywords[0].value.id
    else:
        name, nested = form
        used = pynested.other_use(fn, returns[0], name)
        if used is not None:
            return used
    binds = [n for n in ast.walk(fn) if isinstance(n, ast.Assign) and
             any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
    stores = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and
              isinstance(n.ctx, ast.Store)]
    if len(binds) != 1 or len(stores) != 1 or len(binds[0].targets) != 1:
        return f"{name} is bound more than once"
    value, key = binds[0].value, list[str]()
    while isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) and \
            isinstance(value.slice.value, str):
        key.insert(0, value.slice.value)
        value = value.value
    if not isinstance(value, ast.Call) or ast.unparse(value.func) not in _LOADERS or \
            len(value.args) != 1 or not _opens(fn, value.args[0], param):
        return f"{name} is not the file {param} names, loaded whole"
    sets: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) and \
                isinstance(node.value, ast.Name) and node.value.id == name:
            if not isinstance(node.slice, ast.Constant):
                return f"{name} gets an item set with a key computed when it runs"
            sets.add(str(node.slice.value))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == name and \
                node.func.attr in _MUTATORS:
            return f"{name}.{node.func.attr}() changes it"
    return ast.unparse(value.func), tuple(key), sets, nested


def _opens(fn: ast.FunctionDef, arg: ast.expr, param: str) -> bool:
    """``arg`` is ``open(param)`` or the name ``with open(param) as f`` binds."""
    def is_open(node: ast.expr | None) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "open" and bool(node.args) and isinstance(node.args[0], ast.Name) \
            and node.args[0].id == param
    if is_open(arg):
        return True
    return isinstance(arg, ast.Name) and any(
        isinstance(item.optional_vars, ast.Name) and item.optional_vars.id == arg.id and
        is_open(item.context_expr)
        for node in ast.walk(fn) if isinstance(node, ast.With) for item in node.items)


__all__ = ["NOT_HERE", "member"]
