"""Fix round-trips (preflight/engine/fixcheck.py): a ``fixed:`` block on a firing inline test.

Rule files are written to a temporary folder and run through ``rules test`` / ``rules lint`` /
the loader, as a rule author would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from preflight.commands.rules import run_tests
from preflight.engine import RuleLoadError, load_rules
from preflight.engine.fixcheck import needs_fixed_case

Run = Callable[..., tuple[int, str]]

RULE = """\
schema_version: "1.0"
id: FP8D-DS-{num}
title: t
severity: error
confidence: verified
when:
  all:
    - {{fact: intent.fp8, op: eq, value: true}}
    - {{fact: config.deepspeed.fp16.enabled, op: eq, value: true}}
message: m
fix: {{text: "Set bf16.enabled and remove fp16 from the DeepSpeed JSON."}}
references:
  - {{type: DOCS, url: "https://github.com/deepspeedai/DeepSpeed/blob/v0.16.4/README.md"}}
tests:
  - facts: {{intent.fp8: true, config.deepspeed.fp16.enabled: true}}
    expect: fire
{fixed}
  - {{facts: {{intent.fp8: true}}, expect: quiet}}
read_at: [deepspeedai/DeepSpeed@v0.16.4]
"""
# A second error rule that a bad fix can trip: fires on bf16 with ZeRO-0 (made up for the test).
OTHER = RULE.replace("config.deepspeed.fp16.enabled, op: eq", "config.deepspeed.bf16.enabled, op: eq") \
    .replace("config.deepspeed.fp16.enabled: true", "config.deepspeed.bf16.enabled: true")


def _write(folder: Path, num: str, fixed: str, text: str = RULE) -> Path:
    path = folder / f"FP8D-DS-{num}.yaml"
    path.write_text(text.format(num=num, fixed=fixed), encoding="utf-8")
    return path


GOOD = "    fixed: {unset: [config.deepspeed.fp16.enabled], set: {config.deepspeed.bf16.enabled: true}}"


def test_a_fix_that_clears_the_finding_passes(tmp_path: Path, run_rules: Run) -> None:
    _write(tmp_path, "0001", GOOD)
    code, out = run_rules("test", "--rules", str(tmp_path), "--format", "json")
    cases = json.loads(out)["cases"]
    assert code == 0 and [c["case"] for c in cases] == ["tests[0]", "tests[0] (fixed)",
                                                         "tests[1]"]


def test_a_fix_that_leaves_the_rule_firing_fails(tmp_path: Path, run_rules: Run) -> None:
    path = _write(tmp_path, "0001", "    fixed: {set: {config.deepspeed.bf16.enabled: true}}")
    code, out = run_rules("test", "--rules", str(tmp_path))
    assert code == 1
    assert out.splitlines()[0] == f"FAIL FP8D-DS-0001 tests[0] (fixed) ({path}:15): " \
                                  "expected quiet, got fire"


def test_a_fix_that_leaves_the_rule_undetermined_fails(tmp_path: Path, run_rules: Run) -> None:
    _write(tmp_path, "0001", '    fixed: {set: {config.deepspeed.fp16.enabled: {$unknown: "x"}}}')
    code, out = run_rules("test", "--rules", str(tmp_path), "--format", "json")
    assert code == 1 and json.loads(out)["cases"][1]["got"] == "undetermined"


def test_a_fix_that_trips_another_error_fails(tmp_path: Path, run_rules: Run) -> None:
    _write(tmp_path, "0001", GOOD)
    _write(tmp_path, "0002", "", OTHER)
    code, out = run_rules("test", "--rules", str(tmp_path), "--format", "json")
    failed = [c for c in json.loads(out)["cases"] if not c["ok"]]
    assert code == 1 and len(failed) == 1
    assert failed[0]["rule"] == "FP8D-DS-0001" and "FP8D-DS-0002" in failed[0]["got"]


@pytest.mark.parametrize("fixed", [
    "    fixed: {set: [config.deepspeed.bf16.enabled]}",
    "    fixed: {unset: config.deepspeed.fp16.enabled}",
    "    fixed: {unset: [gpu.min_ccc]}",                     # not a registered fact
    "    fixed: {remove: [config.deepspeed.fp16.enabled]}",
    "    fixed: {}",
    "    fixed: {set: {gpu.min_cc: 9.0}}",                  # a version must be quoted
])
def test_a_malformed_fixed_block_is_a_load_error_with_its_line(tmp_path: Path, fixed: str) -> None:
    path = _write(tmp_path, "0001", fixed)
    with pytest.raises(RuleLoadError) as err:
        load_rules([str(tmp_path)])
    assert f"{path}:17" in str(err.value)   # the fixed: line


def test_fixed_only_on_a_firing_case(tmp_path: Path) -> None:
    text = RULE.replace("expect: quiet}}", "expect: quiet, fixed: {{unset: [intent.fp8]}}}}")
    _write(tmp_path, "0001", "", text)
    with pytest.raises(RuleLoadError, match="expects fire"):
        load_rules([str(tmp_path)])


def test_lint_warns_about_a_config_rule_without_a_round_trip(tmp_path: Path,
                                                             run_rules: Run) -> None:
    _write(tmp_path, "0001", "")
    code, out = run_rules("lint", "--rules", str(tmp_path))
    assert code == 0 and "warning: no fix round-trip" in out
    _write(tmp_path, "0001", GOOD)
    assert run_rules("lint", "--rules", str(tmp_path)) == (0, "0 error(s), 0 warning(s)")


# Bundled rules whose condition reads a config setting but that have no fixed: case yet. The
# test below fails when one of them gains a case (take it off the list) and when a new rule
# lacks one, so the list only shrinks. Issue 12 item 3.
TODO = Path(__file__).parent / "data" / "fix_roundtrip_todo.txt"


def test_every_config_rule_has_a_fix_round_trip_or_is_on_the_shrinking_list() -> None:
    rules = load_rules()
    missing = {r.id for r in rules if needs_fixed_case(r)}
    listed = {line.split("#")[0].strip() for line in TODO.read_text().splitlines()} - {""}
    assert not missing - listed, f"add a fixed: case to {sorted(missing - listed)}"
    assert not listed - missing, f"take {sorted(listed - missing)} off {TODO.name}"


def test_every_bundled_round_trip_passes() -> None:
    results = [r for r in run_tests(load_rules()) if r["case"].endswith("(fixed)")]
    assert results and all(r["ok"] for r in results), [r for r in results if not r["ok"]]
