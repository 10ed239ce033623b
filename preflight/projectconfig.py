"""``[tool.fp8-doctor]`` in the job's ``pyproject.toml``: a team's defaults for ``check``.

Why (issue 12): accepting one finding, adding a rule pack or turning on ``--strict`` had to be
repeated on every command line (and in CI, the pre-commit hook, the Action). The nearest
``pyproject.toml`` to the first config path (else to the current folder), walking up, may hold::

    [tool.fp8-doctor]
    fail-on = "warning"          # error | warning | info | never
    strict = true
    ignore = ["FP8D-ACC-0012"]
    rules = ["ci/fp8-rules"]     # rule packs, relative to the pyproject.toml; add to the base
    baseline = "fp8-baseline.json"
    assume = {"pkg.transformer-engine" = "2.4.0"}

Command-line flags win: a scalar given on the command line replaces the file's; ``ignore`` and
``rules`` are added to; an ``--assume`` key replaces the same key. A key not listed here, a value
of the wrong type (an ``assume`` value the ``--assume`` flag would refuse, a TOML number for a key
that is not a number: ``"gpu.cc" = 99`` is no compute capability, ``2.10`` reads as ``2.1``), a
``pyproject.toml`` that is a FIFO or a device, or TOML that does not parse is a usage error
naming the file (and line), never silently ignored (issue 21 item 10).

The file is used only when its owner is the user or root and no other user can change it
(:mod:`preflight.trust`, issue 21 item 4: another user's ``/tmp/pyproject.toml`` decided the
result of checks under ``/tmp``); otherwise it is skipped and the report says so.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from preflight.errors import UserInputError
from preflight.findings import FailOn

if TYPE_CHECKING:   # the reading kit's types are not loaded on a check without a job
    from preflight.reading.types import ConfigProblem

FILE = "pyproject.toml"
_KEYS = ("fail-on", "strict", "ignore", "rules", "baseline", "assume")


class ProjectConfigError(UserInputError):
    """A ``[tool.fp8-doctor]`` table that cannot be used; names the file (and line)."""


@dataclass(frozen=True)
class ProjectConfig:
    """The defaults a ``pyproject.toml`` sets (empty when there is none or no table)."""

    path: str | None = None
    fail_on: FailOn | None = None
    strict: bool | None = None
    ignore: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()        # absolute paths
    baseline: str | None = None        # absolute path
    assume: dict[str, str] = field(default_factory=dict)
    problems: tuple[ConfigProblem, ...] = ()   # a file skipped as untrusted, for the report


def find_pyproject(paths: Sequence[str], cwd: str | None = None) -> str | None:
    """The nearest ``pyproject.toml`` at or above the first path (a file's folder), else cwd."""
    start = os.path.abspath(paths[0]) if paths else os.path.abspath(cwd or os.getcwd())
    folder = start if os.path.isdir(start) else os.path.dirname(start)
    while True:
        candidate = os.path.join(folder, FILE)
        # not isfile(): a FIFO or a /dev/zero link is found too, and refused by the reader
        if os.path.lexists(candidate) and not os.path.isdir(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def load_project_config(path: str | None) -> ProjectConfig:
    """Read ``[tool.fp8-doctor]`` from ``path`` (None: no file, empty defaults)."""
    if path is None:
        return ProjectConfig()
    from preflight.trust import skipped, untrusted

    why = untrusted(path)
    if why is not None:
        return ProjectConfig(problems=(skipped(path, why, "[tool.fp8-doctor] defaults"),))
    from preflight.reading.parse import ParseError, parse_toml, read_text

    try:
        # read_text refuses FIFOs, devices, oversized and binary files (a hang or a flood).
        text = read_text(path)
    except ParseError as exc:
        raise ProjectConfigError(f"{path}: {exc.message}") from None
    if "fp8-doctor" not in text:
        return ProjectConfig()       # no table: skip parsing the rest of the project's file
    try:
        parsed = parse_toml(text)
    except ParseError as exc:
        where = f"{path}:{exc.line}" if exc.line else path
        raise ProjectConfigError(f"{where}: {exc.message}") from None
    tool = parsed.data.get("tool") if isinstance(parsed.data, dict) else None
    table = tool.get("fp8-doctor") if isinstance(tool, dict) else None
    if table is None:
        return ProjectConfig()
    where = f"{path}:{parsed.line_of(('tool', 'fp8-doctor')) or 1}"
    if not isinstance(table, dict):
        raise ProjectConfigError(f"{where}: [tool.fp8-doctor] must be a table")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ProjectConfigError(f"{where}: unknown key(s) in [tool.fp8-doctor]: "
                                 f"{', '.join(unknown)} (known: {', '.join(_KEYS)})")
    return _parse_table(table, path, where)


def _strings(value: Any, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ProjectConfigError(f"{where}: {key} must be a list of strings")
    return tuple(value)


def _parse_table(table: dict[str, Any], path: str, where: str) -> ProjectConfig:
    root = os.path.dirname(os.path.abspath(path))
    fail_on = None
    if "fail-on" in table:
        try:
            fail_on = FailOn.parse(table["fail-on"])
        except UserInputError as exc:
            raise ProjectConfigError(f"{where}: {exc}") from None
    strict = table.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise ProjectConfigError(f"{where}: strict must be true or false")
    baseline = table.get("baseline")
    if baseline is not None and not (isinstance(baseline, str) and baseline):
        raise ProjectConfigError(f"{where}: baseline must be a path (a string)")
    assume = _assume(table.get("assume", {}), where)
    rules = _strings(table.get("rules", []), "rules", where)
    return ProjectConfig(
        path=path, fail_on=fail_on, strict=strict,
        ignore=_strings(table.get("ignore", []), "ignore", where),
        rules=tuple(os.path.join(root, r) for r in rules),
        baseline=os.path.join(root, baseline) if baseline else None,
        assume=assume,
    )


def _assume(assume: Any, where: str) -> dict[str, str]:
    """The ``assume`` table as ``--assume`` strings, refused here (naming the file) whenever
    the flag would refuse it."""
    if not isinstance(assume, dict) or not all(
            isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in assume.values()):
        raise ProjectConfigError(f"{where}: assume must be a table of KEY = \"VALUE\"")
    from preflight.assume import AssumeError, apply_assumptions
    from preflight.facts import Facts
    from preflight.registry import registry

    for key, value in assume.items():
        spec = registry().lookup(str(key)) if key != "gpu.count" else None
        numeric = key == "gpu.count" or (spec is not None and spec.type in ("int", "float"))
        if isinstance(value, (int, float)) and not numeric:
            raise ProjectConfigError(
                f"{where}: assume {key!r} = {value!r}: write the value as a string "
                f"({key!r} = \"...\"): a TOML number loses how it was written (99 is no "
                "compute capability, 2.10 reads as 2.1)")
    out = {str(k): str(v) for k, v in assume.items()}
    try:
        apply_assumptions(Facts(), out)
    except AssumeError as exc:
        raise ProjectConfigError(f"{where}: assume: {exc}") from None
    return out
