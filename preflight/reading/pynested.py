"""The nested form of a YAML-loading classmethod, for :mod:`.pyfromyaml`: ``return cls(model=
ModelConfig(**d.get('model', {})), low_precision=LowPrecisionConfig(**d.get('low_precision',
{})), ...)``, one dataclass of the same file per section of the loaded mapping (holdout19:
fivezeroes/bdh @ 87eadd9dc7f7bedcbd67969821fd27e7ea5b0f01, config.py:137-155, with
config.yaml ``low_precision: use_fp8: false`` deciding train.py:93's TE branch).

Only that shape is taken: every keyword a section (``d.get('s', {})``, ``d.get('s')``,
``d['s']``) or a literal; the loaded name used elsewhere only as ``d['k'] = ...`` (a section
set, then Unknown) or in an ``in`` test. Anything else -- the mapping passed on, aliased, a
section's item set, a keyword computed from it -- is not this shape, and the caller says why.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from preflight.reading.pyvalues import Unresolved

MAX_SECTIONS = 256
"""More keywords than this: not read (no real config has so many sections)."""
EMPTY, NONE, REQUIRED = "{}", "None", "required"
"""A missing section gives ``{}`` (``d.get('s', {})``), ``None`` (``d.get('s')``: ``**None``
raises TypeError) or raises KeyError (``d['s']``)."""


@dataclass(frozen=True)
class Spec:
    """One keyword of the return: the section ``key`` built by class ``cls``."""

    cls: str
    key: str
    missing: str


@dataclass(frozen=True)
class Section:
    """A section's mapping (or why it is not known), for class ``cls`` of the file."""

    cls: str
    data: Any


def sections(returns: list[ast.Return], me: str) -> tuple[str, dict[str, Any]] | str:
    """(loaded name, {field: Spec or a literal or Unresolved}) of the nested return; else a
    suffix saying why not ("" where the return is no ``cls(k=...)`` at all)."""
    if len(returns) != 1 or not isinstance(call := returns[0].value, ast.Call) or \
            not isinstance(call.func, ast.Name) or call.func.id != me or call.args or \
            not call.keywords or any(k.arg is None for k in call.keywords):
        return ""
    if len(call.keywords) > MAX_SECTIONS:
        return f" (it passes {len(call.keywords)} keywords)"
    loaded: set[str] = set()
    computed: set[str] = set()
    out: dict[str, Any] = {}
    for kw in call.keywords:
        spec = _spec(kw.value)
        if spec is not None:
            loaded.add(spec[0])
            out[str(kw.arg)] = spec[1]
            continue
        try:
            out[str(kw.arg)] = ast.literal_eval(kw.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            out[str(kw.arg)] = Unresolved(f"{kw.arg} is computed when it runs", kw.value.lineno)
            computed |= {n.id for n in ast.walk(kw.value) if isinstance(n, ast.Name)}
    if len(loaded) != 1:
        return " (nor one section of one loaded mapping per keyword)"
    name = loaded.pop()
    if name in computed:
        return f" ({name} is passed to a call it makes)"
    return name, out


def _spec(node: ast.expr) -> tuple[str, Spec] | None:
    """``C(**d.get('s', {}))`` / ``C(**d.get('s'))`` / ``C(**d['s'])`` as (d, Spec)."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args or \
            len(node.keywords) != 1 or node.keywords[0].arg is not None:
        return None
    arg = node.keywords[0].value
    if isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name) and \
            isinstance(arg.slice, ast.Constant) and isinstance(arg.slice.value, str):
        return arg.value.id, Spec(node.func.id, arg.slice.value, REQUIRED)
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and \
            arg.func.attr == "get" and isinstance(arg.func.value, ast.Name) and \
            not arg.keywords and 1 <= len(arg.args) <= 2 and \
            isinstance(arg.args[0], ast.Constant) and isinstance(arg.args[0].value, str):
        if len(arg.args) == 1:
            return arg.func.value.id, Spec(node.func.id, arg.args[0].value, NONE)
        if isinstance(arg.args[1], ast.Dict) and not arg.args[1].keys:
            return arg.func.value.id, Spec(node.func.id, arg.args[0].value, EMPTY)
    return None


def other_use(fn: ast.FunctionDef, ret: ast.Return, name: str) -> str | None:
    """Why ``name`` (the loaded mapping) may change other than by a section set: a use outside
    the return other than ``name['k'] = ...`` / ``del name['k']`` / ``... in name``."""
    inside = {id(n) for n in ast.walk(ret)}
    for parent in ast.walk(fn):
        for child in ast.iter_child_nodes(parent):
            if not isinstance(child, ast.Name) or child.id != name or id(child) in inside or \
                    not isinstance(child.ctx, ast.Load):
                continue
            if isinstance(parent, ast.Subscript) and parent.value is child and \
                    isinstance(parent.ctx, (ast.Store, ast.Del)) or \
                    isinstance(parent, ast.Compare) and child in parent.comparators:
                continue
            return f"{name} is used at line {child.lineno} other than by a section set"
    return None


def section(data: dict[Any, Any], spec: Spec, sets: set[str], who: str, fname: str) -> Section:
    """The mapping ``spec``'s class gets from ``data`` (the file's), or why not known."""
    if spec.key in sets:
        return Section(spec.cls, Unresolved(f"{who} sets {spec.key!r}"))
    if spec.key not in data:
        if spec.missing == EMPTY:
            return Section(spec.cls, {})
        return Section(spec.cls, Unresolved(
            f"{fname} has no {spec.key!r} section ({who} raises "
            f"{'KeyError' if spec.missing == REQUIRED else 'TypeError'})"))
    got = data[spec.key]
    if not isinstance(got, dict):
        return Section(spec.cls, Unresolved(f"{fname}'s {spec.key!r} is no mapping "
                                            f"({spec.cls}(**...) raises TypeError)"))
    return Section(spec.cls, got)


__all__ = ["Section", "Spec", "other_use", "section", "sections"]
