"""Issue 12 item 6, accepting and extending: rule packs add to the bundled rules, own id
prefixes, ``--ignore``, baselines and ``[tool.fp8-doctor]`` in pyproject.toml.

Real runs of ``preflight.cli.main`` on a copy of the bundled example job (which fires
FP8D-ACC-0003 and FP8D-DS-0002 anywhere), with rule packs and config files written to tmp_path.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from preflight import cli
from preflight.examples import example_paths

PACK_RULE = """\
schema_version: "1.0"
id: {id}
title: Team rule - FP8 jobs must use ZeRO-3
severity: warning
confidence: stated
when:
  all:
    - {{fact: intent.fp8, op: eq, value: true}}
    - {{fact: config.deepspeed.zero_optimization.stage, op: ne, value: 2}}
message: our policy
fix: {{text: "Use ZeRO-2."}}
references:
  - {{type: DOCS, url: "https://github.com/deepspeedai/DeepSpeed/blob/v0.16.4/README.md"}}
tests:
  - facts: {{intent.fp8: true, config.deepspeed.zero_optimization.stage: 3}}
    expect: fire
    fixed: {{set: {{config.deepspeed.zero_optimization.stage: 2}}}}
  - {{facts: {{intent.fp8: true, config.deepspeed.zero_optimization.stage: 2}}, expect: quiet}}
"""


@pytest.fixture
def job(tmp_path: Path) -> Path:
    folder = tmp_path / "job"
    folder.mkdir()
    examples = Path(example_paths()[0]).parent   # the YAML and the DeepSpeed JSON it names
    for path in (*examples.glob("*.yaml"), *examples.glob("*.json")):
        shutil.copy(path, folder)
    return folder


def _pack(tmp_path: Path, rule_id: str = "ACME-0001") -> Path:
    pack = tmp_path / "pack"
    pack.mkdir(exist_ok=True)
    (pack / f"{rule_id}.yaml").write_text(PACK_RULE.format(id=rule_id), encoding="utf-8")
    return pack


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = cli.main(["check", "--no-smoke", "--format", "json", *argv])
    return code, json.loads(capsys.readouterr().out)


def _ids(doc: dict, key: str = "findings") -> set[str]:
    return {f["id"] for f in doc[key]}


def test_a_rule_pack_adds_to_the_bundled_rules_with_its_own_prefix(
        job: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, base = _check(capsys, str(job))
    _, both = _check(capsys, str(job), "--rules", str(_pack(tmp_path)))
    assert both["rules_evaluated"] == base["rules_evaluated"] + 1
    assert _ids(both) == _ids(base) | {"ACME-0001"}
    _, only = _check(capsys, str(job), "--rules", str(_pack(tmp_path)), "--no-bundled-rules")
    assert only["rules_evaluated"] == 1 and _ids(only) - {"FP8D-ENV-NOT-TRAINING"} == {
        "ACME-0001"}
    assert cli.main(["rules", "lint", str(_pack(tmp_path))]) == 0
    assert cli.main(["rules", "test", str(_pack(tmp_path))]) == 0


def test_a_pack_reusing_a_bundled_id_is_a_usage_error(job: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        cli.main(["check", str(job), "--rules", str(_pack(tmp_path, "FP8D-DS-0002"))])
    assert err.value.code == 2
    assert "FP8D-DS-0002" in capsys.readouterr().err


def test_lint_refuses_a_malformed_pack_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    assert cli.main(["rules", "lint", str(_pack(tmp_path, "acme-1"))]) == 1
    assert "PREFIX-NNNN" in capsys.readouterr().out


def test_ignore_drops_a_rule_and_an_unknown_id_is_a_usage_error(
        job: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, doc = _check(capsys, str(job), "--ignore", "FP8D-DS-0002")
    assert "FP8D-DS-0002" not in _ids(doc) and doc["ignored"] == ["FP8D-DS-0002"]
    assert "FP8D-ACC-0003" in _ids(doc)
    with pytest.raises(SystemExit) as err:
        cli.main(["check", str(job), "--no-smoke", "--ignore", "FP8D-DS-9999"])
    assert err.value.code == 2


def test_a_baseline_accepts_todays_findings_and_not_new_ones(
        job: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "fp8-baseline.json"
    code = cli.main(["check", str(job), "--no-smoke", "--write-baseline", str(base)])
    assert code == 0 and json.loads(base.read_text())["schema"] == "fp8-doctor-baseline/1"
    code, doc = _check(capsys, str(job), "--baseline", str(base))
    assert code == 0 and doc["summary"]["error"] == 0
    assert {"FP8D-ACC-0003", "FP8D-DS-0002"} <= _ids(doc, "baselined")
    # A finding the baseline did not see (a team rule added since) fails the run; the accepted
    # ones stay baselined.
    code, doc = _check(capsys, str(job), "--baseline", str(base), "--rules",
                       str(_pack(tmp_path)), "--fail-on", "warning")
    assert code == 1 and _ids(doc) == {"ACME-0001"}
    assert {"FP8D-ACC-0003", "FP8D-DS-0002"} <= _ids(doc, "baselined")


def test_write_baseline_never_writes_over_an_input(job: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    ds = job / "ds_zero3_fp16.json"
    before = ds.read_bytes()
    with pytest.raises(SystemExit) as err:
        cli.main(["check", str(job), "--no-smoke", "--write-baseline", str(ds)])
    assert err.value.code == 2 and ds.read_bytes() == before


@pytest.mark.parametrize("text", ["not json", '{"schema": "other", "findings": []}',
                                  '{"schema": "fp8-doctor-baseline/1", "findings": [1]}'])
def test_a_bad_baseline_is_a_usage_error_naming_it(job: Path, tmp_path: Path, text: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "b.json"
    bad.write_text(text)
    with pytest.raises(SystemExit) as err:
        cli.main(["check", str(job), "--no-smoke", "--baseline", str(bad)])
    assert err.value.code == 2 and str(bad) in capsys.readouterr().err


def test_pyproject_sets_defaults_and_the_command_line_wins(
        job: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _pack(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.fp8-doctor]\nfail-on = "never"\n'
        'ignore = ["FP8D-DS-0002"]\nrules = ["pack"]\n', encoding="utf-8")
    code, doc = _check(capsys, str(job))
    assert code == 0 and "FP8D-DS-0002" not in _ids(doc) and "ACME-0001" in _ids(doc)
    code, doc = _check(capsys, str(job), "--fail-on", "error")
    assert code == 1
    code, doc = _check(capsys, str(job), "--no-project-config")
    assert "FP8D-DS-0002" in _ids(doc) and "ACME-0001" not in _ids(doc)


@pytest.mark.parametrize("table, what", [
    ('fail-on = "warnings"', "fail_on"),
    ("strict = 1", "strict"),
    ('ignored = ["X"]', "ignored"),
    ("ignore = [", "invalid TOML"),
])
def test_a_bad_tool_table_is_a_usage_error_naming_the_file(
        job: Path, tmp_path: Path, table: str, what: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f"[tool.fp8-doctor]\n{table}\n", encoding="utf-8")
    with pytest.raises(SystemExit) as err:
        cli.main(["check", str(job), "--no-smoke"])
    out = capsys.readouterr().err
    assert err.value.code == 2 and str(pyproject) in out and what in out
