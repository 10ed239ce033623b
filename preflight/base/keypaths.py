"""Key paths of a parsed document (YAML, JSON, TOML) and the line each was written on: what
rule files (:mod:`preflight.base.yamlsafe`) and job configs (:mod:`preflight.reading.parse`) share."""

from __future__ import annotations

from typing import Any

Path = tuple[Any, ...]


def nearest_line(lines: dict[Path, int], path: Path) -> int | None:
    """Line of ``path`` in ``lines``, or of its nearest ancestor that has one (the document's
    when none does)."""
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return lines.get(())
