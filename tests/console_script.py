"""The ``fp8-doctor`` console script as an installer writes it, for tests that start it.

Read from pyproject.toml (what a fresh install generates), not from the venv's ``bin/``, so a venv
installed before the entry point changed cannot hide a regression. The script is a file in its own
folder, as pip installs it: ``sys.path[0]`` is that folder, never the current one.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def entry_point() -> tuple[str, str]:
    """(module, function) of the ``fp8-doctor`` console script in pyproject.toml."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    module, func = scripts["fp8-doctor"].split(":")
    return module, func


def script_text(prelude: str = "") -> str:
    """pip's wrapper (``import re, sys``; import the entry; ``sys.exit(entry())``), with
    ``prelude`` run first (a test's import hook)."""
    module, func = entry_point()
    return (f"{prelude}import re\nimport sys\nfrom {module} import {func}\n"
            f"if __name__ == '__main__':\n    sys.exit({func}())\n")


def write_script(folder: Path, prelude: str = "") -> list[str]:
    """Write the console script into ``folder`` (created); returns the argv that runs it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "fp8-doctor"
    path.write_text(script_text(prelude))
    return [sys.executable, str(path)]
