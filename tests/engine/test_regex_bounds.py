"""Bounds on rule-pack regular expressions and rule-folder walks (issue 21 item 6).

Before, ``.*a.*a.*...b`` (polynomial backtracking, legal then) ran 60 s on 4,000 a's, and
``--rules /`` walked and parsed the whole disk. Now a pattern of degree 3 or more is refused at
load (:mod:`preflight.engine.regexbounds`), a quadratic one scans at most QUADRATIC_LIMIT
characters, one evaluation has a matching budget, and a rule-folder walk stops at its limits
with a usage error. No assertion here depends on time (benchmarks/bench_regex.py measures it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight import cli
from preflight.engine import regexbounds
from preflight.engine.loader import RULES_MAX_DEPTH, RULES_MAX_FILES

from .helpers import compile_when

RULE = """\
schema_version: "1.0"
id: ACME-0001
title: Team rule
severity: error
confidence: stated
when: {{fact: config.deepspeed.note, op: matches, value: '{pattern}'}}
message: our policy
fix: {{text: "x"}}
references:
  - {{type: DOCS, url: "https://github.com/deepspeedai/DeepSpeed/blob/v0.16.4/README.md"}}
"""


def _leaf(pattern: str) -> dict:
    return {"fact": "gpu.name", "op": "matches", "value": pattern}


@pytest.mark.parametrize("pattern", [
    ".*a.*a.*b", ".*a.*a.*a.*a.*a.*b", "(.*)(.*)(.*)x", "[a-z]*[m-z]*[x-y]*q",
    "a.{0,4000}a.{0,4000}b.{0,4000}c", "(?:.*a)?.*b.*c", r"\w*\d*\w*!", "(?i).*A.*a.*b",
    "(?:x|.*)a.*b.*c",
])
def test_three_repetitions_that_trade_characters_are_refused(pattern: str) -> None:
    _, rep = compile_when(_leaf(pattern))
    assert [p.level for p in rep.problems] == ["error"]
    assert "polynomial time of degree" in rep.problems[0].message


@pytest.mark.parametrize("pattern, degree", [
    (r"[\(\[]?\s*-1\s*,\s*(-1|0)\s*[\)\]]?", 1),        # FP8D-TE-0046: \s cannot cross - or ,
    (r"2\.11\.0(a|b|rc|\.dev)[0-9]*\+.*", 1),            # FP8D-AXO-0004
    ("[^a]*a[^a]*a[^a]*b", 1), ("[a-c]*[d-f]*[g-i]*q", 1), (r"\d+\.\d+\.\d+", 1),
    ("(?i).*deepspeed.*", 2), (".*a.*b", 2), ("(?:.*a)?.*b", 2), ("true|True|1", 0),
])
def test_degree_of_patterns_that_stay_legal(pattern: str, degree: int) -> None:
    assert regexbounds.degree(pattern) == degree
    _, rep = compile_when(_leaf(pattern))
    assert rep.problems == []


def test_the_evaluation_budget_leaves_matches_undetermined_with_the_reason() -> None:
    node, rep = compile_when(_leaf(".*a.*b"))
    assert rep.problems == []
    value = {"gpu.name": "a" * regexbounds.QUADRATIC_LIMIT}
    per_match = regexbounds.cost(".*a.*b", regexbounds.QUADRATIC_LIMIT)
    affordable = regexbounds.MATCH_BUDGET // per_match
    with regexbounds.budget():
        results = [node.fn(value) for _ in range(affordable + 2)]
        assert results[:affordable] == [False] * affordable
        assert results[affordable:] == [None, None]
        assert "budget for regular-expression matching is spent" in str(node.reason(value))
    assert node.fn(value) is False                      # a new evaluation, a new budget


@pytest.mark.timeout(60)
def test_a_pack_with_a_cubic_pattern_is_a_usage_error_not_a_minute(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "ACME-0001.yaml").write_text(RULE.format(pattern=".*a.*a.*a.*a.*b"))
    job = tmp_path / "ds.json"
    job.write_text(json.dumps({"train_batch_size": 8, "note": "a" * 4000}))
    with pytest.raises(SystemExit) as err:
        cli.main(["check", "--no-smoke", "--rules", str(pack), str(job)])
    assert err.value.code == 2
    assert "ACME-0001.yaml" in capsys.readouterr().err
    assert cli.main(["rules", "lint", str(pack)]) == 1


def test_a_rule_folder_walk_stops_at_its_limits(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    many = tmp_path / "many"
    many.mkdir()
    for i in range(RULES_MAX_FILES + 1):
        (many / f"r{i}.yaml").write_text("")
    deep = tmp_path / "deep"
    (deep.joinpath(*["d"] * (RULES_MAX_DEPTH + 2))).mkdir(parents=True)
    for folder, words in ((many, "rule files"), (deep, "nested more than")):
        capsys.readouterr()
        with pytest.raises(SystemExit) as err:
            cli.main(["check", "--no-smoke", "--rules", str(folder)])
        msg = capsys.readouterr().err
        assert err.value.code == 2 and str(folder) in msg and words in msg


def test_rules_slash_is_refused_not_walked(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        cli.main(["check", "--no-smoke", "--rules", "/"])
    assert err.value.code == 2 and "not a rule pack" in capsys.readouterr().err
