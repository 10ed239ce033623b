"""Baselines: findings a team has accepted, reported as baselined, not failing the run.

Why (issue 12): accepting one ``inferred`` warning used to mean lowering ``--fail-on`` for
everything. ``fp8-doctor check --write-baseline FILE`` records today's findings;
``--baseline FILE`` then moves a finding that matches one in the file to ``Report.baselined``
(JSON ``baselined``), where it is still shown but does not count for the exit code. A finding
that changes (another value, another file) no longer matches and fails again: a baseline never
hides what it did not see.

A finding matches by rule id and fingerprint: the sha256 of the id, the location's path relative
to the baseline file's folder (no line: an edit above it must not un-accept it) and the evidence
(fact names and values). The file is JSON, sorted, meant to be committed next to the job.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from preflight.errors import UserInputError
from preflight.facts import encode_value
from preflight.findings import Finding
from preflight.reading.types import ConfigProblem

SCHEMA = "fp8-doctor-baseline/1"
MAX_BYTES = 1024 * 1024


class BaselineError(UserInputError):
    """A baseline file that cannot be read or written; the message names it."""


@dataclass(frozen=True)
class Baseline:
    """The accepted ``(rule id, fingerprint)`` pairs and the folder their paths are relative to."""

    path: str
    root: str
    accepted: frozenset[tuple[str, str]]

    def split(self, findings: Iterable[Finding]) -> tuple[tuple[Finding, ...], tuple[Finding, ...]]:
        """``(still failing, baselined)``."""
        keep: list[Finding] = []
        accepted: list[Finding] = []
        for f in findings:
            (accepted if (f.rule_id, fingerprint(f, self.root)) in self.accepted else keep).append(f)
        return tuple(keep), tuple(accepted)


def _relative(path: str, root: str) -> str:
    try:
        return os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    except ValueError:  # another drive on Windows
        return path


def fingerprint(finding: Finding, root: str) -> str:
    """A stable id of one finding: rule id, location path relative to ``root``, evidence."""
    loc = _relative(finding.location.path, root) if finding.location else None
    evidence = sorted((e.fact, json.dumps(encode_value(e.value), sort_keys=True, default=str))
                      for e in finding.evidence)
    blob = json.dumps([finding.rule_id, loc, evidence], sort_keys=True)
    import hashlib  # here, not at the top: ~3 ms of every check's start-up for a rare flag

    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


def read_baseline(path: str) -> Baseline:
    """Load a baseline file; a clear :class:`BaselineError` naming the file for anything odd."""
    from preflight.base import bounded

    try:
        # non-blocking and re-checked on the descriptor: a FIFO or a device would block or flood
        raw = bounded.read_bytes(path, MAX_BYTES)
        doc = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except FileNotFoundError:
        raise BaselineError(f"no such baseline file: {path} (write one with "
                            "`fp8-doctor check --write-baseline FILE ...`)") from None
    except bounded.NotRegularFile as exc:
        raise BaselineError(f"{path}: {exc.kind}, not a regular file: not a baseline") from None
    except bounded.TooLarge:
        raise BaselineError(f"{path}: over {MAX_BYTES:,} bytes: not a baseline file") from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read the baseline: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BaselineError(f"{path}: not a UTF-8 text file: not a baseline") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise BaselineError(f"{path}: JSON nested too deeply to be a baseline") from None
    except ValueError as exc:
        # NaN / Infinity (strict JSON has neither) and integers past Python's 4,300-digit limit
        # (json.loads raises a plain ValueError): a bad baseline, a usage error (issue 21 item 10)
        why = str(exc).split(":", 1)[0]
        raise BaselineError(f"{path}: not a usable baseline ({why})") from None
    entries = doc.get("findings") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(entries, list):
        raise BaselineError(f"{path}: not an fp8-doctor baseline (expected \"schema\": "
                            f"\"{SCHEMA}\" and a \"findings\" list)")
    accepted = set()
    for i, entry in enumerate(entries):
        if not (isinstance(entry, dict) and isinstance(entry.get("id"), str)
                and isinstance(entry.get("fingerprint"), str)):
            raise BaselineError(f"{path}: findings[{i}] needs an \"id\" and a \"fingerprint\"")
        accepted.add((entry["id"], entry["fingerprint"]))
    root = os.path.dirname(os.path.abspath(path))
    return Baseline(path, root, frozenset(accepted))


def read_trusted(path: str) -> tuple[Baseline | None, tuple[ConfigProblem, ...]]:
    """:func:`read_baseline`, unless the file is not one the user can trust (owned by another
    user, or writable by others: :mod:`preflight.trust`): then no baseline, and the warning."""
    from preflight.trust import skipped, untrusted

    why = untrusted(path)
    if why is not None:
        return None, (skipped(path, why, "a baseline (no finding was accepted)"),)
    return read_baseline(path), ()


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON (a baseline is strict JSON)")


def baseline_document(findings: Sequence[Finding], path: str) -> dict[str, object]:
    """The JSON a baseline file holds for ``findings`` (paths relative to ``path``'s folder)."""
    root = os.path.dirname(os.path.abspath(path))
    entries = [{"id": f.rule_id, "fingerprint": fingerprint(f, root), "title": f.title,
                "location": _relative(f.location.path, root) if f.location else None}
               for f in findings]
    entries.sort(key=lambda e: (str(e["id"]), str(e["fingerprint"])))
    return {"schema": SCHEMA, "findings": entries}


def write_baseline(findings: Sequence[Finding], path: str, inputs: Sequence[str]) -> None:
    """Write the baseline; refuses to write over one of the run's inputs (fp8-doctor only reads),
    through a symbolic link or to anything but a regular file (:func:`outfile.write_atomic`)."""
    from preflight.outfile import OutputError, write_atomic

    for given in inputs:
        try:
            if os.path.exists(path) and os.path.exists(given) and os.path.samefile(path, given):
                raise BaselineError(f"--write-baseline {path}: that is one of this run's inputs; "
                                    "fp8-doctor never writes over what it reads")
        except OSError:
            continue
    text = json.dumps(baseline_document(findings, path), indent=2) + "\n"
    try:
        write_atomic(path, text, flag="--write-baseline")
    except OutputError as exc:
        raise BaselineError(str(exc)) from None
