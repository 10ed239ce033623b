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
from preflight.reading.pyscopes import Bind
from preflight.reading.pyshared import shares
from preflight.reading.pysource import Module, Ref, parse
from preflight.reading.pyvalues import Unresolved, is_main_guard

MAX_NAMES = 2_000
"""Names one ``*`` import binds (a real helper module has a few dozen)."""


class Names:
    """The job modules read for one script's names, each parsed once."""

    def __init__(self, environ: Any = None) -> None:
        self.environ = environ      # the script's process environment (pyenviron.Environ)
        self.modules: dict[str, Module | None] = {}
        self.busy: set[tuple[str, str]] = set()
        self.root: str | None = None                    # the script run (as __main__)
        self.following: set[tuple[str, str]] = set()    # functions inlined now: pyforeign
        self.changes: dict[tuple[int, str], bool] = {}  # importer, module: pyshared.shares
        self.functions: dict[tuple[int, str, int], Any] = {}    # Names.function, once each
        self.found: dict[tuple[int, str, int], Any] = {}
        """Each (importer, name, depth) looked up once: a script that uses an imported object
        on 2,000 lines walked the importer's tree (:func:`_changed_elsewhere`) 2,000 times."""

    def module(self, path: str, depth: int) -> Module | None:
        real = os.path.realpath(path)
        if real not in self.modules:
            if len(self.modules) >= MAX_MODULES or depth > MAX_DEPTH:
                return None
            self.modules[real] = None           # while it is read: an import cycle stops here
            try:
                found = Module(path, imported_tree(parse(path, read_text(path))),
                               environ=self.environ)
            except (ParseError, RecursionError, OSError):
                return None                     # pyimports reports a module it cannot read
            self.modules[real] = found
            link(found, self, depth)
        return self.modules[real]

    def value(self, importer: Module, qualified: str, depth: int) -> Any:
        """What ``qualified`` (``helpers.CFG``) is when ``helpers`` is a job module binding
        ``CFG`` at its top; None otherwise."""
        key = (id(importer), qualified, depth)
        if key not in self.found:
            self.found[key] = self._value(importer, qualified, depth)
        return self.found[key]

    def _other(self, importer: Module, qualified: str, depth: int
               ) -> tuple[str, str, str, Module] | None:
        """(its file, ``helpers``, ``CFG``, the module read) when ``qualified``
        (``helpers.CFG``) names a name of another module of the job; None otherwise."""
        owner, _, attr = qualified.rpartition(".")
        if not owner or owner.endswith(".") or not attr.isidentifier():
            return None
        path = module_file(owner, importer.path)
        if path is None or os.path.realpath(path) == os.path.realpath(importer.path):
            return None
        helper = self.module(path, depth + 1)
        return None if helper is None else (path, owner, attr, helper)

    def _value(self, importer: Module, qualified: str, depth: int) -> Any:
        cycle = self._cycle(importer, qualified)
        if cycle is not None:
            return cycle
        other = self._other(importer, qualified, depth)
        if other is None:
            return None
        path, owner, attr, helper = other
        key = (os.path.realpath(path), attr)
        if attr not in helper.module.binds:
            # a name the module imports itself (`helpers.TrainingArguments` is transformers'),
            # unless the module defines it (its own function or class: called into by pyimports)
            again = helper.imports.get(attr)
            own = attr in helper.functions or attr in helper.classes
            if not again or own or again.startswith(".") or \
                    any(again.startswith(f"{b}.") for b, _ in helper.stars):
                return None
            if key in self.busy:        # `from b import X` in a, `from a import X` in b
                return Unresolved(f"{os.path.basename(path)}: {attr} is imported in a cycle "
                                  "of the job's modules (Python: ImportError, a partly "
                                  "initialised module)", None)
            self.busy.add(key)
            try:                        # another module of the job: its value, named there
                got = self.value(helper, again, depth + 1)
            finally:
                self.busy.discard(key)
            return got if got is not None else Ref(again)
        changed = _changed_elsewhere(helper, importer, owner, attr)
        if changed is not None:
            return Unresolved(f"{os.path.basename(path)}: {attr} {changed}", None)
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

    def _cycle(self, importer: Module, qualified: str) -> Unresolved | None:
        """Why ``qualified`` is no value when its module is the importer itself (``from cfg
        import X`` in cfg.py) or the script being run (imported again from a module it imports:
        run a second time, it meets that module partly initialised); None otherwise."""
        owner = qualified.rpartition(".")[0]
        path = module_file(owner, importer.path) if owner and not owner.endswith(".") else None
        real = os.path.realpath(path) if path is not None else None
        name, mine = os.path.basename(importer.path), os.path.realpath(importer.path)
        if real is None or mine == self.root or real not in (mine, self.root):
            return None     # (the script run importing its own name: pyimports' library name)
        what = "itself" if real == mine else f"{os.path.basename(real)}, the script being run"
        return Unresolved(f"{name} imports {qualified.rpartition('.')[2]} from {what}: an "
                          "import cycle (Python: ImportError, a partly initialised module)",
                          None)

    def function(self, importer: Module, qualified: str, depth: int) -> Any:
        """(the job module, the scope of its function, the functions being followed, a marker
        of values as written there) when ``qualified`` (``quantization.resolve_layer_precision``)
        is a function a job module defines once at its top and does not rebind, and
        ``importer`` changes none of that module's objects (:mod:`.reading.pyforeign`);
        None otherwise."""
        key = (id(importer), qualified, depth)
        if key not in self.functions:   # (asked at each call of an imported name: stat() once)
            self.functions[key] = self._function(importer, qualified, depth)
        return self.functions[key]

    def _function(self, importer: Module, qualified: str, depth: int) -> Any:
        other = self._other(importer, qualified, depth)
        if other is None:
            return None
        path, _, attr, helper = other
        again = helper.imports.get(attr)
        if again is not None and attr not in helper.functions and attr not in helper.classes \
                and attr not in helper.module.binds:
            # a package's `from .models._utils import f` re-exporting a function of the job
            return self.function(helper, again, depth + 1) if depth < MAX_DEPTH else None
        if attr not in helper.functions or attr in helper.module.binds or \
                attr in helper.classes or attr in helper.imports or sum(
                    1 for s in helper.tree.body if isinstance(s, (ast.FunctionDef,
                                                                  ast.AsyncFunctionDef))
                    and s.name == attr) != 1:
            return None
        key = (id(importer), path)
        if key not in self.changes:     # the importer sets attributes of the module's objects
            self.changes[key] = bool(shares(importer, path))
        if self.changes[key]:
            return None
        return helper, helper.functions[attr][1], self.following, lambda v: located(v, path)


def _changed_elsewhere(helper: Module, importer: Module, owner: str, attr: str) -> str | None:
    """How a module's top-level value of ``attr`` is changed out of the reader's sight, or None:
    a function of the module rebinding it through ``global`` (called at import, or later), or
    the importer setting ``owner.attr`` itself (redteam5: both read as the first value, FP8
    "no")."""
    for node in ast.walk(helper.tree):
        if isinstance(node, ast.Global) and attr in node.names:
            return f"is rebound by a function of the module (global {attr}, line {node.lineno})"
    for node in ast.walk(importer.tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name) \
                    and importer.imports.get(t.value.id) == owner:
                return f"is set by {os.path.basename(importer.path)} at line {t.lineno}"
    return None


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


def public(module: Module) -> list[str] | None:
    """The names ``from module import *`` binds: ``__all__`` when it is a literal list or tuple
    of strings, else the top-level names without a leading ``_``; None when ``__all__`` is
    computed or changed (``+=``, a comprehension: which names it binds is not known)."""
    binds = module.module.binds.get("__all__")
    if binds and (len(binds) > 1 or not isinstance(binds[-1].value, (ast.List, ast.Tuple)) or
                  any(isinstance(e, ast.Starred) for e in binds[-1].value.elts)):
        return None
    if binds:
        value = binds[-1].value
        assert isinstance(value, (ast.List, ast.Tuple))
        names = [e.value for e in value.elts
                 if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return names[:MAX_NAMES]
    names = [*module.module.binds, *module.functions, *module.classes, *module.imports]
    return [n for n in dict.fromkeys(names) if not n.startswith("_")][:MAX_NAMES]


def link(module: Module, names: Names | None = None, depth: int = 0) -> None:
    """Bind the names ``module`` star-imports from the job's modules, and let it see the
    values job modules give the names it imports (:attr:`.pyscopes.Layout.imported`)."""
    if names is None:
        names = Names(module.environ)
        names.root = os.path.realpath(module.path)
    sources = _top_imports(module)
    for base, line in module.stars[:MAX_MODULES]:
        path = module_file(base, module.path)
        helper = names.module(path, depth + 1) if path is not None else None
        if helper is None or helper is module or os.path.realpath(helper.path) == \
                os.path.realpath(module.path):
            continue            # (a module star-importing itself binds nothing new)
        sep = "" if base.endswith(".") else "."
        exported = public(helper)
        if exported is None:
            # a computed __all__: each name the script binds may be rebound by this import
            for name in list(module.module.binds):
                module.module.binds[name] = sorted([*module.module.binds[name], Bind(
                    None, line, why=f"{name} may be bound by `from {base} import *` (line "
                    f"{line}), whose __all__ is computed")], key=lambda b: b.line)
            continue
        for name in exported:
            module.imports.setdefault(name, f"{base}{sep}{name}")
            sources.setdefault(name, []).append((line, f"{base}{sep}{name}"))
    binds = module.module.binds
    for name, got in sources.items():
        if name in binds or len({q for _, q in got}) > 1:
            # Python binds in statement order: `MP = "bf16"` then `from helpers import *`, or
            # two star imports, is the later one's (redteam5: the local or first one was read)
            binds[name] = sorted([*binds.get(name, ()), *(Bind(None, at, ref=q) for at, q in got)],
                                 key=lambda b: b.line)
    if module.imports:
        module.imported = lambda qualified: names.value(module, qualified, depth)
        module.foreign = lambda qualified: names.function(module, qualified, depth)


def _top_imports(module: Module) -> dict[str, list[tuple[int, str]]]:
    """Each name the module's top-level imports bind -> [(line, qualified name)]."""
    out: dict[str, list[tuple[int, str]]] = {}
    for stmt in module.tree.body:
        if isinstance(stmt, ast.ImportFrom):
            base = "." * stmt.level + (stmt.module or "")
            sep = "" if base.endswith(".") or not base else "."
            for alias in stmt.names:
                if alias.name != "*":
                    out.setdefault(alias.asname or alias.name, []).append(
                        (stmt.lineno, f"{base}{sep}{alias.name}"))
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                local = alias.asname or alias.name.split(".")[0]
                out.setdefault(local, []).append((stmt.lineno, alias.name if alias.asname
                                                  else local))
    return out
