"""Reader helpers every framework module shares: a plain flattening reader, where a key is,
and following a file that a config names (``deepspeed_config_file``, HF ``deepspeed:``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from preflight.jobs.parse import Parsed, flatten
from preflight.jobs.types import ConfigProblem, Linked, ReaderOutput


def where(path: str, parsed: Parsed, key: tuple[Any, ...]) -> tuple[str, int | None]:
    """``("file:line", line)`` of ``key`` in ``path`` (``(path, None)`` when not known)."""
    line = parsed.line_of(key)
    return (f"{path}:{line}" if line else path), line


def link(path: str, parsed: Parsed, key: tuple[Any, ...], target: Any, kind: str,
          ) -> tuple[list[Linked], list[ConfigProblem]]:
    """Resolve a file named inside a config (relative to the config's folder, then the cwd)."""
    source, line = where(path, parsed, key)
    if not isinstance(target, str) or not target.strip() or target.strip().lower() == "none":
        return [], []
    target = os.path.expanduser(target.strip())
    # accelerate/transformers open it relative to the launch directory; a job folder usually
    # keeps it next to the YAML, so that is tried first.
    candidates = [target] if os.path.isabs(target) else [
        os.path.join(os.path.dirname(path), target), target]
    for cand in candidates:
        if os.path.isfile(cand):
            return [Linked(os.path.normpath(cand), kind, source)], []
    return [], [ConfigProblem(path, line, f"{'.'.join(map(str, key))} names {target!r}, which "
                              "does not exist (looked next to this file and in the current "
                              "directory); the launch would fail to open it")]



def read_plain(prefix: str) -> Callable[[str, Parsed], ReaderOutput]:
    """A reader that flattens the file under ``prefix`` (``config.deepspeed``), keys as written."""
    def read(path: str, parsed: Parsed) -> ReaderOutput:
        data = parsed.data if isinstance(parsed.data, dict) else {}
        facts, prov = flatten(data, parsed, prefix, path)
        return ReaderOutput(facts, prov)
    return read
