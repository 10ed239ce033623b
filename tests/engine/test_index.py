"""The wheel's precomputed rule index (preflight/engine/index.py): it may make loading faster,
never different. Built here from the real rules/, the way hatch_build.py builds it."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

from preflight.engine import RuleSet, bundled_rules_dir, index, load_rules
from preflight.engine.commands import run_tests
from preflight.engine.loader import collect, find_rule_files


def _indexed(root: Path) -> dict:
    doc = json.loads(json.dumps(index.build_index(root, find_rule_files([root]))))  # as shipped
    assert doc["index_version"] == index.INDEX_VERSION
    return doc["rules"]


def test_index_loads_the_same_rules_as_the_yaml() -> None:
    root = bundled_rules_dir()
    entries = _indexed(root)
    assert len(entries) == len(find_rule_files([root]))      # every bundled file is indexed
    fast, problems, _ = collect([root], with_tests=False, index=index.keyed(entries, root))
    assert problems == []
    whole = {r.id: r for r in load_rules()}
    yaml_fast = {r.id: r for r in load_rules(with_tests=False)}
    assert [r.id for r in fast] == sorted(whole)
    for rule in fast:
        assert rule.raw == yaml_fast[rule.id].raw
        assert (rule.title, rule.severity, rule.message, rule.fix, rule.references) == (
            whole[rule.id].title, whole[rule.id].severity, whole[rule.id].message,
            whole[rule.id].fix, whole[rule.id].references)
        # the indexed rule's condition, judged by the rule's own inline test cases
        for result in run_tests(RuleSet((replace(rule, tests=whole[rule.id].tests),))):
            assert result["ok"], result


def test_an_edited_rule_file_is_read_from_its_yaml(tmp_path: Path) -> None:
    root = tmp_path / "rules"
    shutil.copytree(bundled_rules_dir(), root)
    entries = _indexed(root)
    target = root / "te" / "FP8D-TE-0001.yaml"
    target.write_text(target.read_text().replace("severity: error", "severity: warning", 1))
    rules, problems, _ = collect([root], with_tests=False, index=index.keyed(entries, root))
    assert problems == []
    assert {r.id: r for r in rules}["FP8D-TE-0001"].severity.value == "warning"


def test_a_rule_with_something_to_report_gets_its_yaml_line_numbers(tmp_path: Path) -> None:
    root = tmp_path / "rules"
    (root / "te").mkdir(parents=True)
    src = (bundled_rules_dir() / "te" / "FP8D-TE-0001.yaml").read_text()
    (root / "te" / "FP8D-TE-0001.yaml").write_text(src.replace("tags:", "severty: error\ntags:", 1))
    entries = _indexed(root)                                   # indexed as it is: it loads
    _, problems, _ = collect([root], with_tests=False, index=index.keyed(entries, root))
    warning = [p for p in problems if "severty" in p.message]
    assert warning and warning[0].line is not None             # from the YAML, not the index


def test_an_unusable_index_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / index.INDEX_NAME
    assert index.read_index(path, tmp_path) is None            # missing
    path.write_text("{not json")
    assert index.read_index(path, tmp_path) is None
    path.write_text(json.dumps({"index_version": 999, "rules": {}}))
    assert index.read_index(path, tmp_path) is None
    path.write_text(json.dumps({"index_version": index.INDEX_VERSION, "rules": {}}))
    assert index.read_index(path, tmp_path) == {}
