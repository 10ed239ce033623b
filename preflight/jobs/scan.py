"""Which files of a folder are config-like: walked as deep as real repositories nest, bounded.

Layouts such as LLaMA-Factory's ``examples/extras/fp8/x.yaml`` beside ``examples/deepspeed/ds.json``
sit three and more levels below the folder a user names; a scan two levels deep read nothing
there (issue 14). The walk goes :data:`SCAN_DEPTH` levels down, skips hidden folders, caches and
virtual environments, and stops after :data:`SCAN_MAX_DIRS` folders, so a home directory given by
mistake costs a fraction of a second. A folder it cannot list (mode 000) is a problem, never
silence (issue 13 item 4): an error for the folder given, a warning for a subfolder.
"""

from __future__ import annotations

import os

from preflight.reading.parse import MAX_BYTES
from preflight.reading.types import ConfigProblem

SCAN_EXT = (".yaml", ".yml", ".json", ".toml", ".sh", ".bash", ".args", ".slurm", ".sbatch")
SCAN_MAX_FILES = 50
"""Config-like files in one folder scan; more is a repository or a data folder, not one job."""
SCAN_MAX_BYTES = 2 * MAX_BYTES
SCAN_DEPTH = 6
"""Folder levels below the one given (``examples/extras/fp8`` is 3; Megatron-LM's
``tests/functional_tests/test_cases/<model>/<case>`` is 5)."""
SCAN_MAX_DIRS = 400
"""Folders visited in one scan (each costs a directory listing)."""
_SKIP = frozenset({"__pycache__", "node_modules", "site-packages", "venv", "env", "wandb",
                   "mlruns", "lightning_logs", "checkpoints"})


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def scan(folder: str, problems: list[ConfigProblem], scripts: list[str] | None = None,
         ) -> tuple[list[str], int, int]:
    """Config-like files under ``folder`` (up to the limits), their total size, and how many
    other files were seen (for the "nothing read" message); Python files go to ``scripts``
    when given (issue 22: a training script is part of the job)."""
    found: list[str] = []
    total = other = dirs_seen = 0

    def unreadable(err: OSError) -> None:
        top = os.path.normpath(err.filename or folder) == os.path.normpath(folder)
        problems.append(ConfigProblem(
            err.filename or folder, None,
            f"cannot list this folder ({err.strerror or err}); "
            + ("nothing in it was checked" if top else
               "config files in it, if any, were not checked"),
            level="error" if top else "warning", code="unreadable",
            fix="Make the folder readable (chmod u+rx) or name the job's files directly."))

    for root, dirs, files in os.walk(folder, onerror=unreadable):
        dirs_seen += 1
        depth = 0 if root == folder else os.path.relpath(root, folder).count(os.sep) + 1
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP and
                         depth < SCAN_DEPTH and
                         not os.path.exists(os.path.join(root, d, "pyvenv.cfg")))
        if dirs_seen >= SCAN_MAX_DIRS:
            dirs[:] = []
        for name in sorted(files):
            full = os.path.join(root, name)
            if name.startswith(".") or not name.lower().endswith(SCAN_EXT):
                if scripts is not None and name.lower().endswith(".py") and \
                        not name.startswith(".") and len(scripts) < 4 * SCAN_MAX_FILES:
                    scripts.append(full)
                other += 1
                continue
            if (size := _size(full)) > MAX_BYTES:
                # A big JSON beside the configs is data (a dataset); a big YAML/TOML/script is
                # not, and leaving it out silently would hide the job's config.
                if not name.lower().endswith(".json"):
                    problems.append(ConfigProblem(full, None, (
                        f"not read: {size:,} bytes, over the {MAX_BYTES:,}-byte limit for a "
                        "config file (is this really a training config?)")))
                continue
            found.append(full)
            total += size
            if len(found) >= SCAN_MAX_FILES:
                return found, total, other
    return found, total, other
