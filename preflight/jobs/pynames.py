"""Names a Python job file takes from the job's own modules: ``from helpers import *`` and the
values those modules bind (``from cfg import CFG``, ``cfg.LR``), read, never imported.

Before, a star import bound nothing the reader knew (``TrainingArguments(**CFG)`` after ``from
helpers import *``: "CFG is not defined in this file"), and an imported constant stayed a name
(``bf16=helpers.BF16``), never its value (issue 22, the last note's known limits). Python's
rules (the language reference, "The import statement"): ``from m import *`` binds every name in
``m.__all__`` when ``m`` defines it, else every top-level name of ``m`` that does not start with
``_``; an imported name's value is what the module's top-level code last bound it to when the
import finished. Only modules that are files of the job (:func:`.pyimports.module_file`: next to
the importing file or in the current directory, inside the read boundary) are read, at most
:data:`MAX_MODULES` per script and :data:`MAX_DEPTH` levels deep, each bounded as any Python job
file (:func:`.pysource.parse`); a name a module binds only in a function or a class (a function,
a class) stays a name, so calls into it go through :mod:`.pyimports`.
"""

from __future__ import annotations

import ast
import os
from typing import Any

from preflight.jobs.pyimports import MAX_DEPTH, MAX_MODULES, located, module_file
from preflight.reading.parse import ParseError, read_text
from preflight.reading.pysource import Module, parse
from preflight.reading.pyvalues import Unresolved, is_main_guard

MAX_NAMES = 2_000
"""Names one ``*`` import binds (a real helper module has a few dozen)."""


class Names:
    """The job modules read for one script's names, each parsed once."""

    def __init__(self) -> None:
        self.modules: dict[str, Module | None] = {}
        self.busy: set[tuple[str, str]] = set()

    def module(self, path: str, depth: int) -> Module | None:
        real = os.path.realpath(path)
        if real not in self.modules:
            if len(self.modules) >= MAX_MODULES or depth > MAX_DEPTH:
                return None
            self.modules[real] = None           # while it is read: an import cycle stops here
            try:
                found = Module(path, imported_tree(parse(path, read_text(path))))
            except (ParseError, RecursionError, OSError):
                return None                     # pyimports reports a module it cannot read
            self.modules[real] = found
            link(found, self, depth)
        return self.modules[real]

    def value(self, importer: Module, qualified: str, depth: int) -> Any:
        """What ``qualified`` (``helpers.CFG``) is when ``helpers`` is a job module binding
        ``CFG`` at its top; None otherwise."""
        owner, _, attr = qualified.rpartition(".")
        if not owner or owner.endswith(".") or not attr.isidentifier():
            return None
        path = module_file(owner, importer.path)
        if path is None or os.path.realpath(path) == os.path.realpath(importer.path):
            return None
        helper = self.module(path, depth + 1)
        key = (os.path.realpath(path), attr)
        if helper is None or attr not in helper.module.binds:
            return None
        if key in self.busy:        # Python: a partly initialised module, NameError / cycle
            return Unresolved(f"{os.path.basename(path)}: {attr} depends on itself through "
                              "the job's imports", None)
        self.busy.add(key)
        try:
            got = helper._name(attr, helper.module, 0, None)
        finally:
            self.busy.discard(key)
        if isinstance(got, Unresolved):
            return Unresolved(f"{os.path.basename(path)}:{got.line or '?'}: {got.reason}", None)
        return located(got, path)


def imported_tree(tree: ast.Module) -> ast.Module:
    """The module as an import runs it: ``if __name__ == "__main__":`` bodies do not run (their
    ``else:`` does), so their names and calls are not the importer's."""
    body: list[ast.stmt] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and is_main_guard(stmt.test):
            body.extend(stmt.orelse)
        else:
            body.append(stmt)
    return ast.Module(body=body, type_ignores=tree.type_ignores)


def public(module: Module) -> list[str]:
    """The names ``from module import *`` binds: ``__all__`` when it is a literal list or tuple
    of strings, else the top-level names without a leading ``_``."""
    binds = module.module.binds.get("__all__")
    if binds and isinstance(binds[-1].value, (ast.List, ast.Tuple)):
        names = [e.value for e in binds[-1].value.elts
                 if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return names[:MAX_NAMES]
    names = [*module.module.binds, *module.functions, *module.classes, *module.imports]
    return [n for n in dict.fromkeys(names) if not n.startswith("_")][:MAX_NAMES]


def link(module: Module, names: Names | None = None, depth: int = 0) -> None:
    """Bind the names ``module`` star-imports from the job's modules, and let it see the
    values job modules give the names it imports (:attr:`.pyscopes.Layout.imported`)."""
    names = Names() if names is None else names
    for base, _ in module.stars[:MAX_MODULES]:
        path = module_file(base, module.path)
        helper = names.module(path, depth + 1) if path is not None else None
        if helper is None:
            continue
        sep = "" if base.endswith(".") else "."
        for name in public(helper):
            module.imports.setdefault(name, f"{base}{sep}{name}")
    if module.imports:
        module.imported = lambda qualified: names.value(module, qualified, depth)
