"""Reader helpers every framework module shares: a plain flattening reader, where a key is,
and following a file that a config names (``deepspeed_config_file``, HF ``deepspeed:``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from preflight.findings import Source
from preflight.reading.parse import Parsed, flatten
from preflight.reading.refs import named
from preflight.reading.types import ConfigProblem, Linked, ReaderOutput


def where(path: str, parsed: Parsed, key: tuple[Any, ...]) -> tuple[str, int | None]:
    """``("file:line", line)`` of ``key`` in ``path`` (``(path, None)`` when not known)."""
    line = parsed.line_of(key)
    return Source(path, line), line


def link(path: str, parsed: Parsed, key: tuple[Any, ...], target: Any, kind: str,
         ) -> tuple[list[Linked], list[ConfigProblem]]:
    """A file named inside a config: found next to the config or in the current directory, else
    a missing link the job reader looks for further (:mod:`preflight.reading.refs`)."""
    source, line = where(path, parsed, key)
    if not isinstance(target, str) or not target.strip() or target.strip().lower() == "none":
        return [], []
    # accelerate/transformers open it relative to the launch directory; a job folder usually
    # keeps it next to the YAML, so that is tried first.
    return [named(target, kind, path, source, key=".".join(map(str, key)), line=line)], []


def read_plain(prefix: str) -> Callable[[str, Parsed], ReaderOutput]:
    """A reader that flattens the file under ``prefix`` (``config.deepspeed``), keys as written."""
    def read(path: str, parsed: Parsed) -> ReaderOutput:
        data = parsed.data if isinstance(parsed.data, dict) else {}
        facts, prov = flatten(data, parsed, prefix, path)
        return ReaderOutput(facts, prov)
    return read
