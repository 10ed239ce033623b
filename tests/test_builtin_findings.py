"""The one catalogue of built-in findings (issue 24 item 8, structure review P3).

Every built-in id any module can produce is in ``BUILTIN`` (found by reading the package's
source, so a new producer cannot forget it), every built-in finding is built through the
catalogue, every ``ConfigProblem`` code maps to an entry, and ``--ignore`` accepts every id on a
run where it does not occur (before: ``--ignore FP8D-CFG-REFERENCE`` exited 2).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from preflight import cli
from preflight.builtin_findings import BUILTIN, BUILTIN_IDS, config_problem
from preflight.examples import example_paths
from preflight.findings import Severity
from preflight.reading.types import ConfigProblem

PACKAGE = Path(__file__).resolve().parents[1] / "preflight"
# A rule id ends in digits (FP8D-ACC-0003); a built-in id ends in a word (FP8D-CFG-NO-JOB).
BUILTIN_SHAPE = re.compile(r"FP8D-[A-Z0-9]+(?:-[A-Z0-9]+)*-[A-Z][A-Z0-9]*")
# Where a Finding may be constructed directly: rules (the engine), a stored finding read back,
# and the catalogue itself.
MAY_BUILD = {"engine/evaluate.py", "findings.py", "builtin_findings.py"}


def _modules() -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(PACKAGE)), ast.parse(p.read_text(encoding="utf-8")))
            for p in sorted(PACKAGE.rglob("*.py"))]


def test_every_built_in_id_in_the_source_is_in_the_catalogue() -> None:
    seen: dict[str, str] = {}
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for m in BUILTIN_SHAPE.finditer(node.value):
                    if not m.group(0).endswith("-NNNN"):   # "FP8D-XXX-NNNN" in prose
                        seen.setdefault(m.group(0), name)
    missing = {i: where for i, where in seen.items() if i not in BUILTIN}
    assert not missing, f"built-in ids used but not in builtin_findings.BUILTIN: {missing}"
    assert len(seen) >= 12   # the scan itself finds them (it would pass on nothing otherwise)


def test_no_module_builds_a_finding_by_hand() -> None:
    by_hand = [f"{name}:{node.lineno}" for name, tree in _modules() if name not in MAY_BUILD
               for node in ast.walk(tree)
               if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
               and node.func.id == "Finding"]
    assert not by_hand, f"build built-in findings with BUILTIN[id].make(...): {by_hand}"


def test_every_config_problem_code_has_an_entry() -> None:
    codes = {kw.value.value for _, tree in _modules() for node in ast.walk(tree)
             if isinstance(node, ast.Call) for kw in node.keywords
             if kw.arg == "code" and isinstance(kw.value, ast.Constant)
             and isinstance(kw.value.value, str)}
    assert codes >= {"unreadable", "reference", "no_job"}
    entries = {b.problem_code: b.id for b in BUILTIN.values() if b.problem_code}
    assert codes <= set(entries), codes - set(entries)
    for code, rule_id in entries.items():
        for level, severity in (("error", Severity.ERROR), ("warning", Severity.WARNING)):
            made = config_problem(ConfigProblem("job/a.yaml", 3, "why", level=level, code=code))
            assert (made.rule_id, made.severity) == (rule_id, severity)
            assert str(made.location) == "job/a.yaml:3"


def test_entries_are_well_formed() -> None:
    for rule_id, entry in BUILTIN.items():
        assert rule_id == entry.id and BUILTIN_SHAPE.fullmatch(rule_id)
        assert entry.title and entry.when and isinstance(entry.severity, Severity)
        made = entry.make("message", "fix", detail="here")
        assert made.rule_id == rule_id and made.title == f"{entry.title}: here"


def test_ignore_accepts_every_built_in_id_where_none_occurs(capsys) -> None:
    flags = [f for rule_id in sorted(BUILTIN_IDS) for f in ("--ignore", rule_id)]
    code = cli.main(["check", *example_paths(), "--no-smoke", "--no-project-config",
                     "--assume", "gpu=H100", "--format", "json", *flags])
    doc = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and set(doc["ignored"]) == set(BUILTIN_IDS)
    assert not BUILTIN_IDS & {f["id"] for f in doc["findings"]}


@pytest.mark.parametrize("rule_id", ["FP8D-CFG-REFERENCE", "FP8D-IMPORT-FAIL"])
def test_the_ids_the_issue_names_are_accepted_alone(rule_id: str, capsys) -> None:
    code = cli.main(["check", *example_paths(), "--no-smoke", "--no-project-config",
                     "--format", "json", "--ignore", rule_id])
    assert code in (0, 1), capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["ignored"] == [rule_id]
