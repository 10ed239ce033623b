"""The package import map, computed from the source: no cycle between packages, and the floor,
the readers' kit and the engine import only what is under them (issue 25 item 3).

Every ``import`` / ``from ... import`` in ``preflight/`` counts, also the ones inside functions
(kept lazy for start-up time, they still tie the packages together); imports under ``if
TYPE_CHECKING:`` do not (they never run). A package is a first-level name under ``preflight``:
a folder (``engine``, ``base``, ...) or a top-level module (``api``, ``cli``, ...).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "preflight"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["preflight", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run (those under ``if TYPE_CHECKING:`` cannot)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]))
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        yield from _imports(node)


def _targets(module: str, node: ast.Import | ast.ImportFrom, is_package: bool) -> list[str]:
    """The modules of ours an import statement loads (``from P import m`` loads P.m if it is
    a module, else P)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            here = module.split(".") if is_package else module.split(".")[:-1]
            here = here[: len(here) - (node.level - 1)]
            base = ".".join([*here, *([node.module] if node.module else [])])
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                 for a in node.names]
    out = []
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name:
            out.append(name)
    return out


def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _imports(tree):
            for target in _targets(module, node, path.name == "__init__.py"):
                if target != module:
                    edges[module].add(target)
    return edges


EDGES = _edges()


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_map() -> dict[str, dict[str, list[str]]]:
    """package -> package it imports -> the module imports that make the edge."""
    out: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for source, targets in EDGES.items():
        for target in targets:
            a, b = _package(source), _package(target)
            if a != b and b != "preflight":   # `import preflight` (its version, its folder)
                out[a][b].append(f"{source} -> {target}")
    return out


def _cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """Strongly connected components of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def test_the_map_sees_the_imports_it_must() -> None:
    """The walk is not vacuous: lazy imports and ``from P import module`` are edges."""
    assert "preflight.jobs.read" in EDGES["preflight.api"]            # inside a function
    assert "preflight.base.yamlsafe" in EDGES["preflight.engine.loader"]  # from base import m
    assert "frameworks" in package_map()["jobs"]
    assert _cycles({"a": {"b": []}, "b": {"c": []}, "c": {"a": []}}) == [["a", "b", "c"]]


def test_no_cycle_between_packages() -> None:
    graph = package_map()
    cycles = _cycles(graph)
    detail = {" <-> ".join(c): {f"{a} -> {b}": graph[a][b][:3] for a in c for b in c
                                if b in graph.get(a, {})} for c in cycles}
    assert not cycles, detail


# What a package may import besides itself (and ``import preflight`` for the version). The floor
# knows nothing above it; the readers' kit knows no framework; the engine knows only the facts
# (and their registry), findings, errors and the floor: what a check does around it (environment,
# strict, the CLI, the catalogue's framework headings) lives above it.
ALLOWED = {
    "base": {"errors", "facts"},
    "reading": {"base", "errors", "facts", "findings"},
    "engine": {"base", "errors", "facts", "findings", "registry"},
    "registry": set(),
    "facts": {"errors"},
    "findings": {"errors", "facts"},
    "errors": set(),
}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_lower_layers_import_only_what_is_below_them(package: str) -> None:
    imported = package_map().get(package, {})
    extra = {b: imported[b][:3] for b in imported if b not in ALLOWED[package]}
    assert not extra, extra


def test_command_modules_import_no_other_command() -> None:
    """Each command is one module of :mod:`preflight.commands`; they share ``args`` and
    ``console`` only (``report`` is ``check`` with other defaults), and nothing below the front
    doors imports a command."""
    shared = {"preflight.commands", "preflight.commands.args", "preflight.commands.console"}
    for source, targets in EDGES.items():
        for target in targets:
            if not target.startswith("preflight.commands") or target in shared:
                continue
            if source.startswith("preflight.commands."):
                assert (source, target) == ("preflight.commands.report",
                                            "preflight.commands.check"), (source, target)
            else:
                assert source in ("preflight.cli",), (source, target)
    users = {_package(s) for s, ts in EDGES.items() if any(_package(t) == "commands" for t in ts)}
    assert users <= {"commands", "cli", "cluster"}, users
