"""``fp8-doctor rules list|show|lint|test`` through commands.main, and through the real CLI."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from preflight.errors import UserInputError

RULES = str(Path(__file__).parent / "data" / "rules")
Run = Callable[..., tuple[int, str]]


def test_list_text(run_rules: Run) -> None:
    code, out = run_rules("list", "--rules", RULES)
    assert code == 0
    assert out.splitlines()[0] == "4 rule(s)"
    assert "FP8D-DS-0002     info    stated   A withdrawn sample rule" in out
    assert out.rstrip().endswith("(withdrawn)") or "(withdrawn)" in out


def test_list_json_has_every_field(run_rules: Run) -> None:
    code, out = run_rules("list", "--format", "json", "--rules", RULES)
    assert code == 0
    doc = json.loads(out)
    rule = next(r for r in doc["rules"] if r["id"] == "FP8D-ACC-0001")
    assert {"id", "title", "severity", "confidence", "references", "affected", "tags", "when",
            "message", "fix", "aliases", "withdrawn", "facts", "tests"} <= set(rule)
    assert rule["affected"] == [{"package": "accelerate",
                                 "ranges": [[{"introduced": "0.34.0"}, {"fixed": "1.11.0"}]]}]
    assert rule["references"][0] == {
        "type": "REPORT", "url": "https://github.com/huggingface/accelerate/issues/3360"}
    assert doc["warnings"] == []


def test_show_by_id_and_alias(run_rules: Run) -> None:
    code, out = run_rules("show", "FP8D-HW-0001", "--rules", RULES)
    assert code == 0 and out.startswith("FP8D-HW-0001: FP8 asked for on a GPU older than Ada")
    code, out = run_rules("show", "FP8D-DS-0900", "--format", "json", "--rules", RULES)
    assert json.loads(out)["id"] == "FP8D-DS-0002"
    with pytest.raises(UserInputError, match="no rule 'FP8D-XX-0001'"):
        run_rules("show", "FP8D-XX-0001", "--rules", RULES)


@pytest.mark.parametrize("typed", ["fp8d-hw-0001", "HW-0001", "hw-0001"])
def test_show_takes_an_id_in_any_case_and_without_its_prefix(run_rules: Run, typed: str) -> None:
    # A newcomer types the id as they remember it (`rules show acc-0003`): "no rule" sent them
    # back to `rules list` for what was plainly one rule.
    code, out = run_rules("show", typed, "--rules", RULES)
    assert code == 0 and out.startswith("FP8D-HW-0001:")


def test_show_names_a_built_in_finding_typed_in_lower_case(run_rules: Run) -> None:
    code, out = run_rules("show", "cfg-no-job", "--rules", RULES)
    assert code == 0 and out.startswith("FP8D-CFG-NO-JOB:")


def test_test_passes_on_the_samples(run_rules: Run) -> None:
    code, out = run_rules("test", "--rules", RULES)
    assert (code, out) == (0, "13 passed, 0 failed, 4 rule(s)")


def test_test_reports_a_failing_case(run_rules: Run, tmp_path: Path) -> None:
    shutil.copytree(RULES, tmp_path / "rules")
    f = tmp_path / "rules" / "hw" / "FP8D-HW-0001.yaml"
    f.write_text(f.read_text().replace('gpu.min_cc: "9.0"', 'gpu.min_cc: "8.6"'))
    code, out = run_rules("test", "--rules", str(tmp_path / "rules"))
    assert code == 1
    assert out.splitlines()[0] == (
        f"FAIL FP8D-HW-0001 tests[1] ({f}:24): expected quiet, got fire")
    code, out = run_rules("test", "--format", "json", "--rules", str(tmp_path / "rules"))
    assert json.loads(out)["failed"] == 1


def test_lint_clean_and_dirty(run_rules: Run, tmp_path: Path) -> None:
    assert run_rules("lint", "--rules", RULES) == (0, "0 error(s), 0 warning(s)")
    bad = Path(__file__).parent / "data" / "bad"
    code, out = run_rules("lint", "--rules", str(bad / "missing_test_kinds"), "--format", "json")
    assert code == 1
    assert [p["level"] for p in json.loads(out)["problems"]] == ["error"]
    code, out = run_rules("lint", "--rules", str(bad / "unknown_extra_key"))
    assert code == 0                                   # a warning alone does not fail lint
    assert out.endswith("0 error(s), 1 warning(s)")
    code, out = run_rules("lint", "--rules", str(bad / "missing_test_kinds"),
                          "--rules", str(bad / "unknown_extra_key"))
    assert code == 1 and "duplicate rule id 'FP8D-ACC-0009'" in out


def test_markdown_catalogue_is_deterministic(run_rules: Run) -> None:
    first = run_rules("list", "--format", "markdown", "--rules", RULES)[1]
    assert first == run_rules("list", "--format", "markdown", "--rules", RULES)[1]
    assert "## Hardware" in first and "## DeepSpeed" in first
    assert "- affected: accelerate >=0.34.0, \\<1.11.0" in first   # `<` escaped: no HTML tag
    assert "*(withdrawn)*" in first


def test_cli_level_rules_commands(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("preflight.commands.smoke")  # cli.py builds the smoke parser too
    from preflight.cli import main

    assert main(["rules", "test", "--rules", RULES]) == 0
    assert capsys.readouterr().out == "13 passed, 0 failed, 4 rule(s)\n"
    assert main(["rules", "list", "--format", "json", "--rules", RULES]) == 0
    assert len(json.loads(capsys.readouterr().out)["rules"]) == 4
    bad = str(Path(__file__).parent / "data" / "bad" / "unknown_fact")
    with pytest.raises(SystemExit) as info:
        main(["rules", "list", "--rules", bad])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "FP8D-ACC-0009.yaml:8: unknown fact 'intent.fp9'" in err
    assert "Traceback" not in err


# --- an empty rule set is a usage error for every action (as it is for `check`) ---------------

@pytest.mark.parametrize("action", [["list"], ["list", "--format", "json"], ["lint"], ["test"],
                                    ["show", "FP8D-ACC-0001"]])
def test_no_rule_files_is_a_usage_error(run_rules: Run, tmp_path: Path,
                                        action: list[str]) -> None:
    (tmp_path / "notes.txt").write_text("not a rule\n")
    with pytest.raises(UserInputError, match=f"no rule files found in {tmp_path}"):
        run_rules(*action, "--rules", str(tmp_path))


@pytest.mark.parametrize("action", ["list", "lint", "test"])
def test_no_rule_files_exits_2_through_the_cli(action: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("preflight.commands.smoke")
    from preflight.cli import main

    with pytest.raises(SystemExit) as info:
        main(["rules", action, str(tmp_path)])
    assert info.value.code == 2
    assert f"no rule files found in {tmp_path}" in capsys.readouterr().err


# --- positional paths: what a pre-commit hook passes --------------------------------------------

def test_positional_paths_work_like_rules(run_rules: Run) -> None:
    assert run_rules("lint", RULES) == run_rules("lint", "--rules", RULES)
    assert run_rules("test", RULES) == (0, "13 passed, 0 failed, 4 rule(s)")
    one = str(Path(RULES) / "hw" / "FP8D-HW-0001.yaml")
    two = str(Path(RULES) / "acc" / "FP8D-ACC-0001.yaml")
    code, out = run_rules("lint", one, two)
    assert (code, out) == (0, "0 error(s), 0 warning(s)")
    code, out = run_rules("list", one, "--rules", two)          # both forms together
    assert code == 0 and out.splitlines()[0] == "2 rule(s)"
    code, out = run_rules("lint", "--format", "json", one)
    assert code == 0 and json.loads(out)["errors"] == 0


def test_positional_path_that_does_not_exist_is_a_usage_error(run_rules: Run,
                                                              tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="no such rule file or folder"):
        run_rules("lint", str(tmp_path / "nope.yaml"))


def test_lint_of_a_too_deep_rule_is_a_lint_error_not_a_crash(tmp_path: Path) -> None:
    # Through the real console entry in a child process: a libyaml segfault would be exit -11.
    import os
    import subprocess
    import sys

    (tmp_path / "deep.yaml").write_bytes(b"a: " + b"[" * 50_000 + b"]" * 50_000 + b"\n")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "preflight", "rules", "lint", "--rules",
                           str(tmp_path)], capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-400:])
    assert f"{tmp_path / 'deep.yaml'}:1: collections nested more than 64 deep" in proc.stdout


# --- rules list --format json: every field of the rule file -------------------------------------

def test_list_json_gives_every_field_of_every_bundled_rule(run_rules: Run) -> None:
    import datetime as dt

    import yaml

    from preflight.engine.schema import KNOWN

    code, out = run_rules("list", "--format", "json")
    assert code == 0
    rules = json.loads(out)["rules"]
    assert len(rules) > 100
    for rule in rules:
        assert KNOWN | {"area", "facts", "path"} == set(rule), rule["id"]
        raw = yaml.safe_load(Path(rule["path"]).read_text(encoding="utf-8"))
        for key, value in raw.items():
            if isinstance(value, (dt.date, dt.datetime)):
                value = value.isoformat()
            if isinstance(value, str):
                assert rule[key] == value.strip(), (rule["id"], key)
        assert rule["fix"]["commands"] == raw["fix"].get("commands", [])
        assert [t["expect"] for t in rule["tests"]] == [t["expect"] for t in raw["tests"]]
        for got, want in zip(rule["tests"], raw["tests"]):
            assert got["facts"] == want["facts"], rule["id"]   # {$unknown: ...} kept as written
            assert isinstance(got["line"], int)


def test_list_json_has_the_optional_fields(run_rules: Run, tmp_path: Path) -> None:
    src = Path(RULES) / "acc" / "FP8D-ACC-0001.yaml"
    f = tmp_path / "FP8D-ACC-0001.yaml"
    f.write_text(src.read_text() + 'published: 2026-01-02\ndetails: "Longer *text*."\n'
                 "help_uri: https://example.org/fp8\nmin_tool_version: \"0.0.1\"\n"
                 "location: intent.distributed\naliases_note_is_unknown: 1\n")
    code, out = run_rules("show", "FP8D-ACC-0001", "--format", "json", "--rules", str(tmp_path))
    assert code == 0
    rule = json.loads(out)
    assert rule["published"] == "2026-01-02" and rule["modified"] == "2026-11-21"
    assert rule["details"] == "Longer *text*."
    assert rule["help_uri"] == "https://example.org/fp8"
    assert rule["min_tool_version"] == "0.0.1"
    assert rule["location"] == "intent.distributed"
    assert rule["schema_version"] == "1.0"
    assert rule["tests"][2] == {
        "name": "tests[2]", "expect": "undetermined", "line": 28,
        "facts": {"intent.fp8": True, "intent.distributed": {"$unknown": "no config"},
                  "pkg.accelerate.version": "1.2.1"}}


def test_list_json_writes_a_yaml_date_in_a_test_case_as_text(run_rules: Run,
                                                             tmp_path: Path) -> None:
    src = Path(RULES) / "acc" / "FP8D-ACC-0001.yaml"
    f = tmp_path / "FP8D-ACC-0001.yaml"
    f.write_text(src.read_text().replace(
        "{facts: {intent.fp8: true, intent.distributed: deepspeed, pkg.accelerate.version: "
        "\"1.11.0\"}",
        "{facts: {intent.fp8: true, intent.distributed: deepspeed, pkg.accelerate.version: "
        "\"1.11.0\", config.accelerate.when: 2024-01-02}"))
    code, out = run_rules("list", "--format", "json", str(f))
    assert code == 0
    assert json.loads(out)["rules"][0]["tests"][1]["facts"]["config.accelerate.when"] == \
        "2024-01-02"


@pytest.mark.parametrize("extra, message", [
    ("help_uri: not-a-url\n", "help_uri must be an http(s) URL"),
    ("details: [a, b]\n", "details must be a non-empty string"),
    ("published: [2026]\n", "published must be a date"),
])
def test_optional_fields_are_checked(tmp_path: Path, extra: str, message: str) -> None:
    from preflight.engine.loader import load_rules
    from preflight.engine.model import RuleLoadError

    src = Path(RULES) / "acc" / "FP8D-ACC-0001.yaml"
    f = tmp_path / "FP8D-ACC-0001.yaml"
    f.write_text(src.read_text() + extra)
    with pytest.raises(RuleLoadError, match=re.escape(f"FP8D-ACC-0001.yaml:31: {message}")):
        load_rules([str(f)])
