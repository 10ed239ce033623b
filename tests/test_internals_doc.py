"""docs/internals.md names every module of ``preflight/`` and no module that does not exist.

A closed vocabulary, as tests/test_lint.py keeps the code's: the page's module map lists exactly
the modules there are (each by its path in the package, ``reading/pyshared.py``), every package
is in the Layers table, and a path the page gives under one of the package's folders
(``jobs/read.py``, ``preflight/smoke/cache.py``) is a file that exists. Session 37 added thirteen
modules the page never named, and its prose put the reading kit's ``parse.py`` and ``shell.py``
under ``preflight/jobs/``.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "preflight"
TEXT = (REPO / "docs" / "internals.md").read_text(encoding="utf-8")

# NeMo-RL's and verl's own `examples/run_grpo.py` ... share their folder's name with
# preflight/examples/, which holds no such module: the page's upstream paths, not ours.
UPSTREAM_FOLDERS = frozenset({"examples"})


def _modules() -> set[str]:
    return {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
            if "__pycache__" not in p.parts}


def _packages() -> set[str]:
    return {p.parent.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("__init__.py")
            if p.parent != PACKAGE and "__pycache__" not in p.parts}


def _module_map() -> set[str]:
    section = TEXT.split("\n## Module map\n", 1)
    assert len(section) == 2, "docs/internals.md has no '## Module map' section"
    body = section[1].split("\n## ", 1)[0]
    return set(re.findall(r"^- `([^`]+\.py)`:", body, flags=re.M))


def test_the_module_map_lists_every_module() -> None:
    missing = sorted(_modules() - _module_map())
    assert not missing, f"modules without a line in docs/internals.md's module map: {missing}"


def test_the_module_map_lists_no_module_that_does_not_exist() -> None:
    gone = sorted(_module_map() - _modules())
    assert not gone, f"docs/internals.md's module map names modules that do not exist: {gone}"


def test_every_package_has_its_layer() -> None:
    layers = TEXT.split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    top = {name.split("/")[0] for name in _packages()}
    missing = sorted(name for name in top if f"`{name}/`" not in layers)
    assert not missing, f"packages missing from docs/internals.md's Layers table: {missing}"


def test_every_module_path_the_page_gives_exists() -> None:
    folders = {name.split("/")[0] for name in _packages()} - UPSTREAM_FOLDERS
    named = set()
    for match in re.finditer(r"(?<![\w./-])(preflight/)?((?:[a-z_0-9]+/)+[A-Za-z_0-9]+\.py)\b", TEXT):
        prefixed, path = match.group(1), match.group(2)
        if prefixed or path.split("/")[0] in folders:
            named.add(path)
    gone = sorted(path for path in named if not (PACKAGE / path).is_file())
    assert not gone, f"docs/internals.md names modules that do not exist: {gone}"
