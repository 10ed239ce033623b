"""Result types shared by the config readers (kept apart so readers do not import the package)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ConfigProblem:
    """A config file that cannot be used (or a reference in it that cannot be followed)."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else \
            f"{self.path}: {self.message}"


@dataclass(frozen=True)
class Linked:
    """Another file a config points at (accelerate's ``deepspeed_config_file``), to read too."""

    path: str
    kind: str
    source: str      # "file:line" of the key that names it
    overrides: bool = False   # its values win over the naming file's (Megatron --yaml-cfg)


@dataclass(frozen=True)
class ReaderOutput:
    """What one reader found in one file."""

    facts: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, str] = field(default_factory=dict)
    problems: tuple[ConfigProblem, ...] = ()
    linked: tuple[Linked, ...] = ()


@dataclass(frozen=True)
class ConfigRead:
    """Everything read from the paths given: facts, their ``file:line``, problems, files+kinds."""

    facts: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, str] = field(default_factory=dict)
    problems: list[ConfigProblem] = field(default_factory=list)
    files: list[tuple[str, str]] = field(default_factory=list)
