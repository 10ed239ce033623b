"""Which file of the job an import loads (``module_file``): the one rule jobs/pyimports.py (reading
the job's own modules) and reading/pyshared.py (objects shared across them) follow, here below both
(tests/test_layers.py: reading never imports jobs)."""

from __future__ import annotations

import os
from contextvars import ContextVar

from preflight.reading.boundary import refuse
from preflight.reading.refs import locate, under_roots


def targets(name: str, importer: str) -> tuple[str, ...]:
    """The files (relative to ``importer``'s folder, or from a relative import's) an import of
    ``name`` may load."""
    level = len(name) - len(name.lstrip("."))
    parts = name[level:].split(".")
    if not all(part.isidentifier() for part in parts):
        return ()
    if level:
        folder = os.path.dirname(importer)
        for _ in range(level - 1):
            folder = os.path.dirname(folder)
        base = os.path.join(folder, *parts)
    else:
        base = os.path.join(*parts)
    # a package folder wins over a module of the same name beside it (importlib's FileFinder
    # looks for <name>/__init__.py first; redteam11: utils.py was read for a utils/ package)
    return os.path.join(base, "__init__.py"), base + ".py"


SYS_PATH: ContextVar[str | None] = ContextVar("fp8_doctor_module_sys_path", default=None)
"""While a module run with ``-m`` is read (:mod:`preflight.jobs.pymodlinks`): the folder it was found from,
``sys.path[0]`` for it and every module it imports (``python -m scripts.base_train`` from the
checkout's top finds ``nanochat.fp8`` there, not next to ``scripts/base_train.py``)."""


def module_file(name: str, importer: str) -> str | None:
    """The job file an import of ``name`` in ``importer`` loads, or None (a package installed
    elsewhere, or not in the job)."""
    root = SYS_PATH.get()
    if root is not None and not name.startswith("."):
        for target in targets(name, importer):
            cand = os.path.join(root, target)
            if os.path.isfile(cand) and refuse(cand) is None:
                return os.path.normpath(cand)
    for target in targets(name, importer):
        found = locate(target, importer)
        if found is not None:
            return found
    if name.startswith("."):
        return None
    # a package of the repository itself, at its top (`from unsloth import ...` in unsloth's
    # examples/*.py: the checkout is the package the script imports, as `pip install -e .`
    # leaves it; holdout19 sbhavani/unsloth 8cb627e8)
    return next((f for t in targets(name, importer)[:1] if (f := under_roots(t)) is not None),
                None)
