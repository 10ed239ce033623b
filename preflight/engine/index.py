"""A precomputed index of the bundled rule files, for the check path of an installed wheel.

Parsing YAML is most of what loading the rule base costs a ``fp8-doctor check`` (~40 ms for the
bundled rules even without their inline tests, plus ~11 ms to import PyYAML at all). The wheel
build (``hatch_build.py``) therefore stores, next to ``preflight/_rules``, every rule file's
parsed data (without its ``tests:`` block, which a check never evaluates) and the size and CRC-32
of the file it came from. The loader uses an entry only when the installed file still matches, so
an edited or replaced rule file is parsed from its YAML as usual; the index can make loading
faster, never different. Source checkouts and editable installs have no index and always parse
the YAML.

The index is data produced by the same safe loader (:mod:`preflight.base.yamlsafe`) from the same
files: JSON, no code.

Each entry also carries a ``gate``: the facts the rule's condition reads and whether the rule is
quiet when none of them is present, found by compiling and evaluating it at build time, and the
``groups`` of a top-level ``all``: one per child that is false without its facts, so the rule is
quiet when one group's facts are all absent (the job's config facts, typically) even though
other facts it reads are there (the machine's packages). A check
whose facts include none of them need not build the rule at all (its outcome cannot differ:
a condition reads nothing but its own facts), which is most of the rule base on a machine or job
that uses one framework (issue 14, item 4). tests/engine/test_index.py evaluates every bundled
rule's test cases both ways.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

INDEX_VERSION = 3   # 2: entries carry a gate; 3: an entry's data is JSON text
INDEX_NAME = "_rules_index.json"


def digest(data: bytes) -> str:
    """What an index entry is keyed by: the file's size and CRC-32.

    It detects an edited or replaced rule file, which is all it is for (someone who can change
    installed rule files can change the code that reads them too, so a cryptographic hash would
    add nothing); zlib is already loaded, hashlib would cost ~3 ms of import on every check.
    """
    return f"{len(data)}:{zlib.crc32(data):08x}"


def build_index(rules_dir: Path, files: Sequence[Path]) -> dict[str, Any]:
    """The index document for ``files`` (all under ``rules_dir``); raises on a file that does
    not parse, since a wheel must not ship a rule base that fails to load."""
    from preflight.base import yamlsafe
    from preflight.engine.loader import without_tests

    entries: dict[str, Any] = {}
    for path in files:
        data = path.read_bytes()
        parsed = yamlsafe.load(without_tests(data)).data
        if json.loads(json.dumps(parsed)) != parsed:
            continue  # a date or non-string key JSON cannot carry: this file stays YAML-only
        # The data as JSON text inside the index: reading the index parses one long string per
        # rule instead of every rule's objects, and a check decodes only the rules it builds
        # (~30 of ~280 on a machine without a job; issue 26 item 4).
        entry: dict[str, Any] = {"digest": digest(data),
                                 "data": json.dumps(parsed, separators=(",", ":"))}
        gate = _gate(parsed, str(path))
        if gate is not None:
            entry["gate"] = gate
        entries[path.relative_to(rules_dir).as_posix()] = entry
    return {"index_version": INDEX_VERSION, "rules": entries}


def _gate(parsed: Any, shown: str) -> dict[str, Any] | None:
    """The facts the rule reads and whether it is quiet when all are absent; None when the rule
    does not build cleanly (it is then always built at load, and reports its problems)."""
    from preflight.engine.conditions import All
    from preflight.engine.model import Reporter
    from preflight.engine.schema import build_rule

    rep = Reporter(shown, lambda _path: None)
    rule = build_rule(parsed, rep)
    if rule is None or rep.problems:
        return None
    # Groups: the facts of each top-level ``all`` child that is false when its facts are all
    # absent. False decides an ``all`` whatever the other children say (conditions.All), so the
    # rule is quiet when every fact of one group is absent, though others it reads are present
    # (a torch installed on a laptop makes pkg.torch.* present; the job's config.* are not).
    groups = [sorted(set(c.fact_names())) for c in getattr(rule.when, "children", ())
              if isinstance(rule.when, All) and c.fact_names() and c.fn({}) is False]
    return {"facts": sorted(set(rule.when.fact_names())), "quiet": rule.when.fn({}) is False,
            "names": [rule.id, *rule.aliases], "groups": groups}


def entry_data(entry: Any) -> Any:
    """The parsed rule file an entry holds (None when the entry is unusable: the caller then
    parses the YAML)."""
    text = entry.get("data") if isinstance(entry, dict) else None
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def skippable(entry: Any, present: frozenset[str]) -> list[str] | None:
    """The rule's id and aliases when its gate says it is quiet on facts named ``present`` (none
    of its facts is there, or none of one group's), else None. The caller still checks the file against the entry."""
    gate = entry.get("gate") if isinstance(entry, dict) else None
    if not isinstance(gate, dict) or gate.get("quiet") is not True:
        return None
    facts, names = gate.get("facts"), gate.get("names")
    if not isinstance(facts, list) or not isinstance(names, list) or not names \
            or not all(isinstance(n, str) for n in (*facts, *names)):
        return None
    if not present.intersection(facts):
        return list(names)
    groups = gate.get("groups")
    if isinstance(groups, list) and any(
            isinstance(g, list) and g and all(isinstance(n, str) for n in g)
            and not present.intersection(g) for g in groups):
        return list(names)
    return None


def read_index(path: Path, root: Path) -> dict[str, Any] | None:
    """The entries of the index at ``path`` by rule file (``root`` / the relative path they were
    built with), or None when there is no index or it is unusable."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("index_version") != INDEX_VERSION:
        return None
    rules = doc.get("rules")
    return keyed(rules, root) if isinstance(rules, dict) else None


def keyed(rules: dict[str, Any], root: Path) -> dict[str, Any]:
    """Index entries (keyed by path relative to the rules folder) by the files' own paths, as
    ``str(path)`` of the paths the loader finds (strings: building ~280 ``Path`` objects and
    hashing them took a few ms of every check)."""
    base = str(root)
    return {os.path.join(base, *rel.split("/")): entry for rel, entry in rules.items()
            if isinstance(rel, str)}
