"""The wheel's precomputed rule index (preflight/engine/index.py): it may make loading faster,
never different. Built here from the real rules/, the way hatch_build.py builds it."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from preflight.commands.rules import run_tests
from preflight.engine import RuleSet, bundled_rules_dir, index, load_rules
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


def _gated_load(root: Path, entries: dict, present: frozenset[str]) -> tuple[list, dict]:
    skipped: dict[str, str] = {}
    rules, problems, _ = collect([root], with_tests=False, index=index.keyed(entries, root),
                                 present=present, skipped=skipped)
    assert problems == []
    return rules, skipped


def test_a_gated_load_judges_every_test_case_as_the_whole_rule_base_does() -> None:
    # The gate (index entries say which facts a rule reads and that it is quiet without them)
    # lets a check skip building rules that cannot speak on its facts: never a different result.
    from preflight.engine import evaluate
    from preflight.engine.model import RuleSet as RS

    root = bundled_rules_dir()
    entries = _indexed(root)
    whole = load_rules()
    assert sum("gate" in e for e in entries.values()) == len(entries)
    cases = [case.facts for rule in whole for case in rule.tests]
    cases.append({})                                            # no fact at all
    by_names: dict[frozenset[str], list[dict]] = {}
    for facts in cases:                                         # one load per set of names
        by_names.setdefault(frozenset(facts), []).append(facts)
    skipped_any = 0
    for names, group in by_names.items():
        built, skipped = _gated_load(root, entries, names)
        skipped_any += bool(skipped)
        gated = RS(tuple(built), skipped=skipped)
        assert len(gated) == len(whole)
        for facts in group:
            a, b = evaluate(whole, facts), evaluate(gated, facts)
            assert [f.rule_id for f in a.findings] == [f.rule_id for f in b.findings], facts
            assert [u.rule_id for u in a.undetermined] == \
                [u.rule_id for u in b.undetermined], facts
    assert skipped_any > len(by_names) // 2                     # and it does skip


def test_a_rule_that_fires_on_absent_facts_is_never_skipped(tmp_path: Path) -> None:
    root = tmp_path / "rules"
    (root / "x").mkdir(parents=True)
    import yaml

    doc = yaml.safe_load((bundled_rules_dir() / "te" / "FP8D-TE-0001.yaml").read_text())
    doc["when"] = {"fact": "pkg.transformer-engine.version", "op": "missing"}
    for key in ("location", "tests"):
        doc.pop(key, None)
    (root / "x" / "A.yaml").write_text(yaml.safe_dump(doc))
    entries = _indexed(root)
    gate = next(iter(entries.values()))["gate"]
    assert gate["quiet"] is False
    built, skipped = _gated_load(root, entries, frozenset())
    assert skipped == {} and [r.id for r in built] == ["FP8D-TE-0001"]


def test_an_edited_file_is_built_whatever_its_gate_says(tmp_path: Path) -> None:
    root = tmp_path / "rules"
    shutil.copytree(bundled_rules_dir(), root)
    entries = _indexed(root)
    target = root / "te" / "FP8D-TE-0001.yaml"
    target.write_text(target.read_text() + "\n")
    built, skipped = _gated_load(root, entries, frozenset())
    assert "FP8D-TE-0001" not in skipped.values()
    assert "FP8D-TE-0001" in {r.id for r in built}


def _as_a_wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled rules as an installed wheel has them: an index next to the package; returns
    the rules' folder."""
    from preflight.engine import loader

    root = bundled_rules_dir()
    (tmp_path / index.INDEX_NAME).write_text(json.dumps(index.build_index(
        root, find_rule_files([root]))))
    monkeypatch.setattr(loader, "_package_dir", lambda: tmp_path)
    monkeypatch.setattr(loader, "bundled_rules_dir", lambda: root)
    return root


def test_a_check_on_a_wheel_counts_skipped_rules_and_can_ignore_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As installed from a wheel: an index next to the package. A skipped rule still counts,
    # and --ignore of its id is no "unknown id" usage error.
    from preflight.api import evaluate_facts
    from preflight.facts import Facts

    root = _as_a_wheel(tmp_path, monkeypatch)
    facts = Facts({"pkg.torch.version": "2.5.1"})
    skipped = load_rules(None, with_tests=False, present=frozenset(facts.values)).skipped
    assert "FP8D-TE-0001" in skipped                            # reads nothing this check has
    report = evaluate_facts(facts, ignore=["FP8D-TE-0001"])
    assert report.rules_evaluated == len(find_rule_files([root]))
    assert report.ignored == ("FP8D-TE-0001",)
    with pytest.raises(Exception, match="no rule or finding"):
        evaluate_facts(facts, ignore=["FP8D-NOPE-0001"])


def test_a_rule_is_skipped_when_one_group_of_its_all_is_absent(tmp_path: Path) -> None:
    # A machine fact present (torch installed) does not make a job rule buildable when the
    # job's half of its ``all`` is absent: that half is false, and false decides an ``all``.
    root = tmp_path / "rules"
    (root / "x").mkdir(parents=True)
    import yaml

    doc = yaml.safe_load((bundled_rules_dir() / "te" / "FP8D-TE-0001.yaml").read_text())
    doc["when"] = {"all": [{"fact": "config.accelerate.mixed_precision", "op": "eq",
                            "value": "fp8"},
                           {"fact": "pkg.torch.version", "op": "version_in", "value": "<2.5"}]}
    for key in ("location", "tests"):
        doc.pop(key, None)
    (root / "x" / "A.yaml").write_text(yaml.safe_dump(doc))
    entries = _indexed(root)
    gate = next(iter(entries.values()))["gate"]
    assert gate["groups"] == [["config.accelerate.mixed_precision"], ["pkg.torch.version"]]
    _, skipped = _gated_load(root, entries, frozenset({"pkg.torch.version"}))
    assert set(skipped.values()) == {"FP8D-TE-0001"}
    built, skipped = _gated_load(root, entries, frozenset({"pkg.torch.version",
                                                           "config.accelerate.mixed_precision"}))
    assert skipped == {} and [r.id for r in built] == ["FP8D-TE-0001"]


def test_prewarm_parses_in_a_thread_what_the_check_then_takes_from_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # From a source tree (no index beside the package) a check with a smoke step parses its
    # rules while the children run (issue 26); its own load then returns the very same set.
    from preflight.engine import loader

    root = bundled_rules_dir()
    monkeypatch.setattr(loader, "_package_dir", lambda: tmp_path)   # no index here
    monkeypatch.setattr(loader, "bundled_rules_dir", lambda: root)
    monkeypatch.setattr(loader, "_CACHE", {})
    pack = tmp_path / "pack"
    shutil.copytree(root / "deepspeed", pack)
    thread = loader.prewarm([str(pack)], bundled=True)
    assert thread is not None
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert len(loader._CACHE) == 2                                  # the base and the pack
    base = load_rules(None, with_tests=False, present=frozenset({"pkg.torch.version"}))
    assert any(base is cached for cached in loader._CACHE.values())
    assert any(load_rules([str(pack)], with_tests=False) is cached
               for cached in loader._CACHE.values())


def test_prewarm_does_nothing_where_the_wheel_index_builds_the_rules(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from preflight.engine import loader

    _as_a_wheel(tmp_path, monkeypatch)
    assert loader.prewarm((), bundled=True) is None
    assert loader.prewarm((), bundled=False) is None
