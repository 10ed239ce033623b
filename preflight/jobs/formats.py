"""A config file's format (yaml | json | toml | text), from its extension or its first bytes.

Which framework a parsed file belongs to is decided by the frameworks' scores
(:func:`preflight.frameworks.detect`).
"""

from __future__ import annotations

import os
import re

YAML_EXT = (".yaml", ".yml")
JSON_EXT = (".json",)
TOML_EXT = (".toml",)
TEXT_EXT = (".sh", ".bash", ".args", ".txt", ".slurm", ".sbatch", ".cfg", "")


def format_of(path: str, head: str) -> str:
    """yaml | json | toml | text, from the extension, else from the first characters."""
    ext = os.path.splitext(path)[1].lower()
    if ext in YAML_EXT:
        return "yaml"
    if ext in JSON_EXT:
        return "json"
    if ext in TOML_EXT:
        return "toml"
    if ext in TEXT_EXT and ext:
        return "text"
    stripped = head.lstrip()
    if stripped.startswith("{"):
        return "json"
    # A shebang, or a line that starts with a --flag (argument files, launch scripts); a YAML
    # file whose comments or strings merely contain "--" stays YAML.
    if stripped.startswith("#!") or re.search(r"(?m)^\s*--[A-Za-z]", head) or \
            re.search(r"(?m)^\s*(?:accelerate|torchrun|deepspeed|python3?|srun|colossalai)\s", head):
        return "text"
    # A shell file without a shell extension (`source common.conf`, holdout21's Megatron-MoE-
    # ModelZoo: `export X=${X:-...}` and `if [[ ... ]]` lines) is no YAML with a syntax error;
    # these statements at column 0 never start a YAML config (a block scalar's lines are indented).
    if _SHELL_LINE.search(head):
        return "text"
    return "yaml"


_SHELL_LINE = re.compile(r"(?m)^(?:export\s+[A-Za-z_]\w*(?:=|\s*$)|[A-Za-z_]\w*=(?:\S|$)|"
                         r"(?:source|\.)\s+\S|if\s+\[\[?\s|set\s+-[euxo]+\b|"
                         r"declare\s+-[aAix]+\s)")


SCRIPT_EXT = (".py", ".ipynb", ".pyw")


def split_entry(path: str) -> tuple[str, str | None]:
    """``("file.py", "name")`` for ``file.py::name`` (a function of a Python config registry:
    which config is the job), else ``(path, None)``. Light: the CLI checks paths with it before
    any reader is imported."""
    base, sep, entry = path.rpartition("::")
    if sep and entry and not os.path.lexists(path) and base.lower().endswith(SCRIPT_EXT):
        return base, entry
    return path, None
