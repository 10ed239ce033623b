"""Attributes of objects the file builds: ``obj.x`` of a call's result, a ``@property`` of the
file's class, and ``self.x`` of a dataclass (issue 22, holdout13), for :mod:`.pysource`.

- ``args.recipe`` where ``args`` is ``ScriptArgs(...)`` (a call of a class of the file) and
  ``recipe`` is a ``@property`` (or ``functools.cached_property``) of that class or of a base
  class of the file: the property's return that runs, with ``self`` the call (miles
  31f1ca96, scripts/run_kimi_k2.py:89-91 ``return _RECIPES[self.model_name]``, a module-level
  table of frozen dataclasses, read at :98 as ``{recipe.hf_checkpoint}``). A property with no
  return that runs (one that raises) is Unresolved; so is one nested past
  :data:`.pycallers.MAX_INLINE`;
- ``self.x`` in a method of a ``@dataclass`` with no ``__init__`` of its own: the field ``x`` as
  every call of the class passes it (or its default, ``field(default=...)``), then what
  ``__post_init__`` sets it to where that runs (lightning-thunder 1e22aacb,
  thunder/benchmarks/benchmark_litgpt.py:223-233 ``TorchAOFP8Handler``: ``self._enabled =
  self.use_fp8_linear``). A field another method sets again is Unresolved.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from preflight.reading import pyenviron, pyfromyaml, pyhydra, pyshared
from preflight.reading.pyscopes import Scope
from preflight.reading.pyvalues import MAX_DEPTH, Call, Ref, Unresolved

if TYPE_CHECKING:
    from preflight.reading.pysource import Module

NOT_SET = object()
"""What :func:`.pycallers.instance_attr` gives when the text shows no value set that runs (the
caller goes on as before); None is a value ``self.x = None`` sets."""
_PROPERTY = frozenset({"builtins.property", "functools.cached_property"})
_DATACLASS = frozenset({"dataclasses.dataclass", "pydantic.dataclasses.dataclass"})
MAX_FIELDS = 512
"""Fields of one dataclass read."""


def attribute(module: Module, node: ast.Attribute, scope: Scope, depth: int) -> Any:
    """``node`` (``x.attr``) in ``scope``: ``self.x`` as the class sets it, a property of a
    call's class, a keyword of a call, an import's member, a key of a Hydra config."""
    from preflight.reading.pycallers import instance_attr
    owner = module.owners.get(id(scope))
    if isinstance(node.value, ast.Name) and owner is not None and owner[0] is not None and \
            scope.params and node.value.id == scope.params[0] and \
            node.value.id not in scope.binds and node.value.id not in scope.values:
        got = instance_attr(module, owner[0], node.attr, depth)
        if got is not NOT_SET:
            return got
    base = module.evaluate(node.value, scope, depth + 1)
    if isinstance(base, Ref):
        got = module.ref(f"{base.name}.{node.attr}")
        return pyshared.member(module, node.value.id, node.attr, got, scope, node.lineno,
                               depth) if isinstance(node.value, ast.Name) else got
    if isinstance(base, (str, dict)):   # a string's method; a key of a Hydra config
        return pyenviron.bound(base, node.attr, node.lineno) if isinstance(base, str) \
            else pyhydra.member(base, node.attr, node.lineno)
    if isinstance(base, Call):
        if base.name in ("parse_args", "parse_known_args"):
            return module.option(node.attr, base)
        if node.attr in base.kwargs:
            return base.kwargs[node.attr]
        got = prop(module, base, node.attr, depth)
        if got is NOT_SET and base.func.startswith("__main__.") and \
                base.func[9:] in module.classes and isinstance(node.value, ast.Name) and \
                scope.params and node.value.id == scope.params[0] and \
                node.value.id in scope.values:
            # `self.x` in a method or property called on that call: what the class's own code
            # sets, as in any method (not `obj.x` elsewhere: code the text does not follow
            # may have changed obj)
            got = instance_attr(module, base.func[9:], node.attr, depth + 1)
        if got is NOT_SET:
            got = pyshared.default(module, base, node.attr, depth)
        if got is NOT_SET:      # a job module's dataclass, or its from_yaml classmethod
            got = pyfromyaml.member(module, base, node.attr, node.lineno)
            got = NOT_SET if got is pyfromyaml.NOT_HERE else got
        if got is not NOT_SET:
            return got
        return Unresolved(f"{node.attr} of {base.name or 'an object'}() is not given in "
                          "this file", node.lineno)
    return base if isinstance(base, Unresolved) else \
        Unresolved(f".{node.attr} of a value computed when the script runs", node.lineno)


@dataclass(frozen=True)
class BoundMethod(Unresolved):
    """``obj.method`` of a call of the file's class: unknown as a value, what the method
    returns when called (:func:`call_method`)."""

    base: Any = field(default=None, compare=False, repr=False)
    scope: Any = field(default=None, compare=False, repr=False)


def call_method(module: Module, node: ast.Call, scope: Scope, depth: int,
                func: BoundMethod) -> Any:
    """The value of ``obj.method(...)``: the method's return that runs, ``self`` the call that
    made ``obj`` and its parameters the call's arguments (lightning-thunder 1e22aacb,
    benchmark_litgpt.py:363 ``self.compile = self.low_precision_handler.
    check_and_add_compile_options(self.compile)``); :data:`NOT_SET` where it is not followed
    (no return, ``*args``, nested past :data:`.pycallers.MAX_INLINE`)."""
    from preflight.reading.pycallers import MAX_INLINE
    inner: Scope = func.scope
    if not inner.returns or module._inlining >= MAX_INLINE or depth > MAX_DEPTH or \
            any(isinstance(a, ast.Starred) for a in node.args) or \
            any(k.arg is None for k in node.keywords) or len(node.args) >= len(inner.params):
        return NOT_SET
    module._inlining += 1
    try:
        values: dict[str, Any] = {p: module.evaluate(d, module.module, depth + 1)
                                  for p, d in inner.defaults.items()}
        values[inner.params[0]] = func.base
        values.update((p, module.evaluate(a, scope, depth + 1))
                      for p, a in zip(inner.params[1:], node.args))
        values.update((k.arg, module.evaluate(k.value, scope, depth + 1))
                      for k in node.keywords if k.arg in inner.params)
        bound = replace(inner, values=values)
        module.__dict__.setdefault("_kept", []).append(bound)
        got = module.result(bound, depth + 1)
        return NOT_SET if isinstance(got, Ref) else got
    finally:
        module._inlining -= 1


def _lineage(module: Module, cls: str) -> list[str]:
    """``cls`` and its bases defined in this file, nearest first."""
    out, todo = [cls], [cls]
    while todo and len(out) < 16:
        node = module.classes.get(todo.pop(0))
        for b in node.bases if node is not None else ():
            if isinstance(b, ast.Name) and b.id in module.classes and b.id not in out:
                out.append(b.id)
                todo.append(b.id)
    return out


def prop(module: Module, base: Call, attr: str, depth: int) -> Any:
    """``base.attr`` where ``base`` calls a class of the file and ``attr`` is its property."""
    if not base.func.startswith("__main__.") or depth > MAX_DEPTH:
        return NOT_SET
    from preflight.reading.pycallers import MAX_INLINE
    for cls in _lineage(module, base.func[9:]):
        scope = module.methods.get((cls, attr))
        if scope is None or scope.node is None:
            continue
        if not any(_is_property(module, d) for d in scope.node.decorator_list[:8]):
            return NOT_SET if scope.node.decorator_list else BoundMethod(
                f"{attr} of {cls}() is a method", scope.node.lineno, base=base, scope=scope)
        if not scope.params:
            return Unresolved(f"the property {cls}.{attr} takes no self", scope.node.lineno)
        if module._inlining >= MAX_INLINE:
            return Unresolved(f"the property {cls}.{attr} is nested too deeply to follow",
                              scope.node.lineno)
        module._inlining += 1
        try:
            bound = replace(scope, values={scope.params[0]: base})
            module.__dict__.setdefault("_kept", []).append(bound)   # ids stay unique
            return module.result(bound, depth + 1)
        finally:
            module._inlining -= 1
    return NOT_SET


def _is_property(module: Module, dec: ast.expr) -> bool:
    if isinstance(dec, ast.Name) and dec.id == "property":     # the builtin, unless rebound
        return not any(dec.id in names for names in (
            module.module.binds, module.imports, module.functions, module.classes))
    value = module.evaluate(dec, module.module, 1)
    return isinstance(value, Ref) and value.name in _PROPERTY


def is_dataclass(module: Module, cls: str) -> bool:
    node = module.classes.get(cls)
    for dec in node.decorator_list[:8] if node is not None else ():
        value = module.evaluate(dec.func if isinstance(dec, ast.Call) else dec, module.module, 1)
        if isinstance(value, Ref) and value.name in _DATACLASS:
            return True
    return False


def init_scope(module: Module, cls: str) -> Scope | None:
    """The ``__init__`` a dataclass gets: its fields (``init=False`` and ``ClassVar`` ones left
    out) as parameters with their defaults, registered as ``cls.__init__`` so that
    :func:`.pycallers.param_value` reads the calls of the class; None for no dataclass."""
    made = module.__dict__.setdefault("_dc_inits", {})
    if cls in made:
        return made[cls]        # type: ignore[no-any-return]
    made[cls] = None
    if not is_dataclass(module, cls):
        return None
    params, defaults, fixed = ["self"], {}, module.__dict__.setdefault("_dc_fixed", {})
    for stmt in module.classes[cls].body[:MAX_FIELDS]:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)) or \
                "ClassVar" in ast.unparse(stmt.annotation):
            continue
        value = stmt.value
        if isinstance(value, ast.Call) and ast.unparse(value.func) in ("field",
                                                                       "dataclasses.field"):
            made_by = next((k.value for k in value.keywords if k.arg == "default_factory"),
                           None)        # default_factory=list: what calling it makes
            keep = value
            value = next((k.value for k in value.keywords if k.arg == "default"), None) or (
                None if made_by is None else ast.Call(made_by, [], [], lineno=stmt.lineno,
                                                      col_offset=0))
            if any(k.arg == "init" and isinstance(k.value, ast.Constant) and
                   k.value.value is False for k in keep.keywords):
                if value is not None:   # no parameter: always its default
                    fixed[(cls, stmt.target.id)] = value
                continue
        params.append(stmt.target.id)
        if value is not None:
            defaults[stmt.target.id] = value
    scope = Scope("__init__", [], tuple(params), defaults)
    module.owners[id(scope)] = (cls, "__init__")
    made[cls] = scope
    return scope


def field_value(module: Module, cls: str, attr: str, depth: int) -> Any:
    """``self.attr`` in a method of the dataclass ``cls``: the field as its calls pass it,
    then ``__post_init__``'s sets; :data:`NOT_SET` when it is no dataclass or sets nothing."""
    from preflight.reading.pycallers import parameter
    init = init_scope(module, cls)
    busy = module.__dict__.setdefault("_dc_busy", {})
    if init is None:
        return NOT_SET
    if (cls, attr) in busy:     # `if self.x is None: self.x = ...`: the value so far
        return busy[(cls, attr)]
    got: Any = NOT_SET
    if attr in init.params[1:]:
        got = parameter(module, init, attr, depth + 1, None)
    elif (cls, attr) in module.__dict__.get("_dc_fixed", {}):
        got = module.evaluate(module.__dict__["_dc_fixed"][(cls, attr)], module.module, depth + 1)
    post = module.methods.get((cls, "__post_init__"))
    if post is None or not post.params:
        return got
    sets = [s for s in post.sets.get(post.params[0], ())[:MAX_FIELDS] if s[0] == (attr,)]
    return apply_sets(module, post, (cls, attr), sets, got, depth)


def apply_sets(module: Module, scope: Scope, key: tuple[str, str], sets: Any, got: Any,
               depth: int) -> Any:
    """``self.attr`` after the method ``scope``'s ``sets`` of it, in order, from ``got``: a set
    under a condition that does not run keeps the value, one the text cannot decide makes it
    Unresolved. While a set's value is worked out, ``self.attr`` in it is the value so far
    (``self.x = f(self.x)``; the module's ``_dc_busy``)."""
    busy = module.__dict__.setdefault("_dc_busy", {})
    try:
        for path, value, line, guards in sets:
            busy[key] = got
            state = module.runs(guards, scope, depth=depth) if guards else True
            if len(path) > 1 and state is not False:    # `self.config.layer_precision = [...]`
                got = _nested(got, path[1:], module.evaluate(value, scope, depth + 1)
                              if state is True else Unresolved(
                                  f"self.{'.'.join(path)} is {state.reason}", line), line)
            elif state is True:
                got = module.evaluate(value, scope, depth + 1)
            elif isinstance(state, Unresolved):
                got = Unresolved(f"self.{key[1]} is {state.reason}", line)
    finally:
        busy.pop(key, None)
    return got


def _nested(got: Any, path: tuple[str, ...], value: Any, line: int) -> Any:
    """``got`` (``self.config``) after ``self.config.<path> = value`` (bionemo's
    ``NVEsmEncoder.__init__``: ``self.config.layer_precision = ["fp8"] * n`` when the config
    has none): a call's keyword, a mapping's key; another value Unresolved."""
    if isinstance(got, Call):
        return got.with_set(path, value, line)
    if isinstance(got, dict) and len(path) == 1:
        out = type(got)(got)
        out[path[0]] = value
        return out
    if got is NOT_SET or isinstance(got, Unresolved):
        return got
    return Unresolved(f"self.{'.'.join(path)} is set at line {line} on a value this reader "
                      "does not change", line)
