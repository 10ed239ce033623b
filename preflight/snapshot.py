"""Snapshots: the facts of one machine (and its job configs) as versioned JSON, for replay.

``fp8-doctor snapshot -o F`` writes one; ``fp8-doctor check --snapshot F`` replays it through the
same rules, so a cluster node's environment can be diagnosed anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from preflight import __version__
from preflight.base.builds import pairing_facts
from preflight.errors import UserInputError
from preflight.facts import MAX_NESTING, Facts, Unknown, decode_value, facts_to_json, value_fits
from preflight.findings import Finding
from preflight.probes.base import ProbeResult
from preflight.registry import registry

# What a job's config files contribute; replaced whole when a replay is given new config paths.
JOB_NAMESPACES = ("config.", "intent.")
MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024
"""A snapshot is ~100 KB (a few hundred facts); a bigger file is refused unread, and so is one
that is not a regular file (a FIFO would block the read forever, /dev/zero would fill memory)."""

SNAPSHOT_SCHEMA_VERSION = "1"
"""The major version of the snapshot JSON this fp8-doctor writes and reads."""



def _of_the_job(name: str, prov: dict[str, Any]) -> bool:
    """A fact the job's files gave: ``config.*``, ``intent.*``, and an ``env.*`` a job reader
    stated (a variable the job's own process sets, e.g. LLaMA-Factory's
    ACCELERATE_MIXED_PRECISION), not the runtime probe's."""
    return name.startswith(JOB_NAMESPACES) or (
        name.startswith("env.") and prov.get(name) not in (None, "runtime", "assume"))


class SnapshotError(UserInputError):
    """A snapshot file that cannot be used, with the file (and line) named in the message."""


def read_snapshot(path: str) -> dict[str, Any]:
    """The validated JSON document of a snapshot; errors name the file (and line)."""
    from preflight.base import bounded

    try:
        # non-blocking, re-checked on the descriptor: a FIFO swapped in after the caller's
        # check must not hang the run (issue 21 item 4)
        text = bounded.read_bytes(path, MAX_SNAPSHOT_BYTES).decode("utf-8")
    except bounded.NotRegularFile as exc:
        raise SnapshotError(f"{path}: {exc.kind}, not a regular file; a snapshot is the JSON "
                            "file that `fp8-doctor snapshot` writes") from None
    except bounded.TooLarge:
        raise SnapshotError(f"{path}: over the {MAX_SNAPSHOT_BYTES:,}-byte limit for a "
                            "snapshot") from None
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read snapshot: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise SnapshotError(f"{path}: not a UTF-8 text file (byte {exc.start}); a snapshot is "
                            "the JSON that `fp8-doctor snapshot` writes") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SnapshotError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise SnapshotError(f"{path}: JSON nested too deeply to be a snapshot") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("facts"), dict):
        raise SnapshotError(f"{path}: not an fp8-doctor snapshot (no 'facts' object)")
    version = str(doc.get("schema_version", ""))
    if version.split(".")[0] != SNAPSHOT_SCHEMA_VERSION:
        raise SnapshotError(
            f"{path}: snapshot schema_version {version!r} is not supported "
            f"(this fp8-doctor reads {SNAPSHOT_SCHEMA_VERSION}.x)"
        )
    return doc


def _refuse_unreadable(path: str) -> None:
    import os
    import stat

    try:
        st = os.stat(path)
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read snapshot: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise SnapshotError(f"{path}: not a regular file; a snapshot is the JSON file that "
                            "`fp8-doctor snapshot` writes")
    if st.st_size > MAX_SNAPSHOT_BYTES:
        raise SnapshotError(f"{path}: {st.st_size:,} bytes, over the {MAX_SNAPSHOT_BYTES:,}-byte "
                            "limit for a snapshot")


def snapshot_document(facts: Facts, probes: Sequence[ProbeResult], inputs: Sequence[str],
                      findings: Sequence[Finding] = (), *, redact: bool = True) -> dict[str, Any]:
    """The JSON document of a snapshot; redacted unless ``redact`` is False.

    ``findings`` are those that arise outside the rules (an unreadable config file, a crashed
    probe): they are kept so that a replay reports exactly what the live run did.
    """
    doc: dict[str, Any] = {
        "schema_version": f"{SNAPSHOT_SCHEMA_VERSION}.0",
        "tool": {"name": "fp8-doctor", "version": __version__},
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "inputs": list(inputs),
        "probes": [p.to_dict() for p in probes],
        "findings": [f.to_dict() for f in findings],
        **facts_to_json(facts),
    }
    if redact:
        from preflight.redact import redact_document

        doc = redact_document(doc)
    from preflight.render.sanitize import finite_document

    finite: dict[str, Any] = finite_document(doc)   # a copy of the same shape
    return finite   # JSON has no NaN: a bare NaN breaks every strict reader


def _checked(name: str, value: Any) -> Any:
    """A registered fact whose value has the wrong shape becomes Unknown (a hand-edited or
    corrupted snapshot must not make rules decide on ``gpu.count: "eight"``). Names this
    version does not register are kept: no rule can name them, and a newer fp8-doctor may.
    A value nested deeper than any config (:data:`~preflight.facts.MAX_NESTING`) becomes
    Unknown too: json.loads takes ~1,000 levels, rendering and evaluation recurse per level."""
    if isinstance(value, Unknown):
        return value
    if _deeper_than(value, MAX_NESTING):
        return Unknown(f"the snapshot's value is nested more than {MAX_NESTING} deep")
    spec = registry().lookup(name)
    if spec is None or value_fits(value, spec.type):
        return value
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return Unknown(f"the snapshot's value {shown} is not of type {spec.type}")


def _deeper_than(value: Any, limit: int) -> bool:
    todo = [(value, 0)]
    while todo:  # iterative: the point is not to recurse on it
        cur, depth = todo.pop()
        if isinstance(cur, (list, dict)):
            if depth >= limit:
                return True
            todo.extend((v, depth + 1) for v in (cur.values() if isinstance(cur, dict) else cur))
    return False


def _plain(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 4096 and value.isprintable()


def load(path: str, *, drop_job: bool = False) -> tuple[Facts, list[Finding]]:
    """Facts and stored findings of a snapshot.

    ``drop_job`` leaves out what the snapshot's own config files said (``config.*``,
    ``intent.*``, an ``env.*`` a job reader stated, and the findings about those files), for a
    replay with new config paths.
    """
    _refuse_unreadable(path)
    try:
        doc = read_snapshot(path)
        if "findings" in doc and not isinstance(doc["findings"], (list, type(None))):
            raise SnapshotError(f"{path}: 'findings' must be a list, not "
                                f"{type(doc['findings']).__name__}")
        str(doc.get("schema_version"))   # a 5,000-digit number raises here, not later
    except SnapshotError:
        raise
    except ValueError as exc:
        # json.loads refuses integers of more than 4,300 digits with a plain ValueError (and
        # str() of one does too): not an internal error but a bad snapshot (issue 13, item 8).
        why = str(exc).split(":", 1)[0]   # "Exceeds the limit (4300 digits) for integer ..."
        raise SnapshotError(f"{path}: not a usable snapshot ({why})") from None
    prov_raw = doc.get("provenance")
    # Provenance from a snapshot names files on the machine it was taken on: text to show, never
    # a file to open here (issue 21; --diff checks the same, fixdiff/safety.py). Only plain,
    # short strings without control characters are kept: a newline or tab in a "path" could
    # forge lines of a patch or a report.
    prov = {str(k): v for k, v in prov_raw.items() if _plain(v)} \
        if isinstance(prov_raw, dict) else {}
    values = {str(k): _checked(str(k), decode_value(v)) for k, v in doc["facts"].items()
              if not (drop_job and _of_the_job(str(k), prov))}
    # A snapshot taken before pkg.<dist>.built_with_torch existed: derive it here, or a nightly
    # torchao would read as a release paired by its base version (base/builds.py).
    for name, value in pairing_facts(values).items():
        values.setdefault(name, value)
    findings: list[Finding] = []
    for i, raw in enumerate(doc.get("findings") or ()):
        try:
            finding = Finding.from_dict(raw)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SnapshotError(f"{path}: findings[{i}] is malformed ({exc!r})") from None
        if not (drop_job and finding.rule_id.startswith("FP8D-CFG-")):
            findings.append(finding)
    return Facts(values, {k: v for k, v in prov.items() if k in values}), findings
