"""The optional ``location: <fact>`` key: which evidence places a finding at a config line."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.engine import RuleLoadError, evaluate, load_rules
from preflight.facts import Facts

RULE = """\
schema_version: "1.0"
id: FP8D-DS-9001
title: t
severity: error
confidence: inferred
{location}when:
  all:
    - {{fact: intent.fp8, op: eq, value: true}}
    - {{fact: config.accelerate.mixed_precision, op: eq, value: fp8}}
    - {{fact: config.deepspeed.fp16.enabled, op: eq, value: true}}
message: m
fix: {{text: f}}
references: [{{type: WEB, url: "https://example.org"}}]
tests:
  - {{facts: {{intent.fp8: true, config.accelerate.mixed_precision: fp8, config.deepspeed.fp16.enabled: true}}, expect: fire}}
  - {{facts: {{intent.fp8: false}}, expect: quiet}}
"""

FACTS = Facts(
    {"intent.fp8": True, "config.accelerate.mixed_precision": "fp8",
     "config.deepspeed.fp16.enabled": True},
    {"intent.fp8": "/job/accel.yaml:1", "config.accelerate.mixed_precision": "/job/accel.yaml:17",
     "config.deepspeed.fp16.enabled": "/job/ds.json:3"},
)


def _finding(tmp_path: Path, location: str):
    (tmp_path / "FP8D-DS-9001.yaml").write_text(RULE.format(location=location))
    return evaluate(load_rules([str(tmp_path)]), FACTS).findings[0]


def test_a_config_setting_places_the_finding_before_a_derived_intent(tmp_path: Path) -> None:
    assert str(_finding(tmp_path, "").location) == "/job/accel.yaml:17"


def test_location_names_the_fact_to_point_at(tmp_path: Path) -> None:
    found = _finding(tmp_path, "location: config.deepspeed.fp16.enabled\n")
    assert str(found.location) == "/job/ds.json:3"


@pytest.mark.parametrize("value, message", [
    ("gpu.count", "not one of the facts in 'when'"),
    ("[a, b]", "location must be a fact name"),
])
def test_bad_location_is_a_load_error_with_file_and_line(tmp_path: Path, value: str,
                                                         message: str) -> None:
    (tmp_path / "FP8D-DS-9001.yaml").write_text(RULE.format(location=f"location: {value}\n"))
    with pytest.raises(RuleLoadError) as err:
        load_rules([str(tmp_path)])
    assert message in str(err.value) and "FP8D-DS-9001.yaml:6" in str(err.value)


INTENT_RULE = """\
schema_version: "1.0"
id: FP8D-TE-9002
title: t
severity: warning
confidence: inferred
when:
  all:
    - {fact: intent.fp8, op: eq, value: true}
    - {fact: intent.backend, op: eq, value: te}
    - {fact: intent.activation_checkpointing, op: eq, value: true}
message: m
fix: {text: f}
references: [{type: WEB, url: "https://example.org"}]
tests:
  - {facts: {intent.fp8: true, intent.backend: te, intent.activation_checkpointing: true}, expect: fire}
  - {facts: {intent.fp8: false}, expect: quiet}
"""


def test_the_fact_that_makes_the_rule_fire_places_it_not_the_fp8_flag(tmp_path: Path) -> None:
    """Without `location:`, a finding is placed at the line of the fact particular to the rule
    (here: the launch-script line turning checkpointing on), not at the fp8 flag or backend that
    nearly every rule tests; those place it only when nothing else has a line (issue 12)."""
    (tmp_path / "FP8D-TE-9002.yaml").write_text(INTENT_RULE)
    rules = load_rules([str(tmp_path)])
    prov = {"intent.fp8": "/job/launch.sh:7", "intent.backend": "/job/accel.yaml:8",
            "intent.activation_checkpointing": "/job/launch.sh:15"}
    values = {"intent.fp8": True, "intent.backend": "te", "intent.activation_checkpointing": True}
    (found,) = evaluate(rules, Facts(values, prov)).findings
    assert str(found.location) == "/job/launch.sh:15"
    prov["intent.activation_checkpointing"] = "intent"          # a default: no line
    (found,) = evaluate(rules, Facts(values, prov)).findings
    assert str(found.location) == "/job/launch.sh:7"
