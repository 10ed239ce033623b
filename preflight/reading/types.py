"""Result types shared by the config readers (kept apart so readers do not import the package)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from preflight.facts import Unknown


@dataclass(frozen=True)
class ConfigProblem:
    """A config file that cannot be used (or a reference in it that cannot be followed)."""

    path: str
    line: int | None
    message: str
    level: str = "error"
    """``error``: the file (or job) cannot be used; ``warning``: it was read, with a caveat (a
    referenced file not found here that the framework may find at launch, a duplicate key)."""
    fix: str | None = None
    """Fix text specific to this problem (None: the generic "fix the file so it parses")."""
    code: str = "unreadable"
    """unreadable | reference | duplicate_key | no_job | not_a_config | kind_forced | outside_job
    (a file outside the job, not read: reading/boundary.py) | untrusted (picks the
    finding id)."""
    cut: bool = False
    """The reader stopped here at one of its bounds (more words, overrides or commands than any
    real job has): what comes after, which wins over what came before, was not read, so the
    job's FP8 is not known from this file (jobs/walk.py states ``config.<kind>.unread_args``)."""

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
    missing: bool = False     # not found next to the naming file or in the current directory:
                              # ``path`` is the value as written; the job reader looks further
    key: str = ""             # the key or flag that names it, as written
    line: int | None = None   # its line in the naming file
    optional: bool = False    # a sourced script, or the framework's entry script a launch runs
                              # (jobs/entryscripts.py): read if it holds settings, else left out
    variables: tuple[tuple[str, str], ...] = ()   # what the sourcing script set (bash passes it)
    argv: tuple[str, ...] | None = None   # a Python script's arguments on the launch line
    environ: tuple[tuple[str, str, str], ...] | None = None   # and the environment it gives
                              # it: (name, value or a shellvars.runtime marker, where)
    entry: str | None = None  # the function of a Python config registry the launch line names
    after: bool = False       # run by the launch script after or beside training (evaluation,
                              # export, merging: launch.not_training): of the job, not read
    included: bool = False    # a module of the job the naming script imports: already read
                              # with it, with the values it passes (jobs/pyimports.py)
    syspath: str | None = None  # a module run with `-m` (reading/pymodrun.py): the folder it
                              # was found from, sys.path[0] for the imports it makes


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


def cut_short(facts: dict[str, Any], prov: dict[str, Any], name: str, where: Any) -> None:
    """A reader reached its cap on facts (``parse.MAX_FACTS_PER_FILE``) at ``name``: the settings
    after it, which may be the framework's FP8 switch, were not kept, so
    ``config.<kind>.unread_args`` says so once and intent leaves FP8 Unknown, never "no"
    (redteam5: 2,100 keys before ``mixed_precision: fp8`` made an accelerate config FP8 "no")."""
    parts = name.split(".")
    key = f"config.{parts[1]}.unread_args" if len(parts) > 2 and parts[0] == "config" else None
    if key is not None and key not in facts:
        facts[key] = Unknown(f"more settings than the {len(facts):,} kept from one file: from "
                             f"{name[:80]} on they were not read")
        prov[key] = where
